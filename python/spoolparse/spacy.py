"""spoolparse as a spaCy pipeline: :func:`load` gives a spaCy ``Language`` whose tokenizer is the
whole spoolparse pipeline (tokenizer, tagger, FEATS, lemmatizer, parser), so that each ``Doc``
holds spoolparse's words, UPOS and XPOS, morphology, lemmas, sentences and dependency tree,
with each word's calibrated arc confidence as ``Token._.confidence`` and each sentence's as
``Span._.confidence`` (on ``doc.sents``). spaCy's Matcher, DependencyMatcher, displaCy and
``nlp.pipe`` (``n_process`` too: the tokenizer pickles as the model's path) work on them as on
any parsed Doc. Needs spaCy 3 (``pip install "spoolparse[spacy]"``).

    >>> import spoolparse.spacy
    >>> nlp = spoolparse.spacy.load("en_ewt.model")                          # doctest: +SKIP
    >>> doc = nlp("The cat sat on the mat.")                                 # doctest: +SKIP
    >>> [(t.text, t.dep_, t.head.text, t._.confidence) for t in doc][:2]     # doctest: +SKIP
    [('The', 'det', 'cat', 0.998), ('cat', 'nsubj', 'sat', 0.987)]

A spaCy token is a spoolparse *word*: a multiword token ("isn't": "is", "n't") is as many
spaCy tokens, and ``doc.text`` is the words joined by one space where the text had whitespace,
so it differs from the input where a multiword token's words do not spell it (Spanish "al":
"a", "el") or where the text had more whitespace than one space. ``Token._.start_char`` and
``Token._.end_char`` give each word's place in the input text (a multiword token's words share
its span), as :class:`spoolparse.Word` does. The root's label is UD's ``root`` (spaCy's own
parsers say ``ROOT``), and ``str(token.morph)`` lists the FEATS in spaCy's order.

This module owns the mapping of a parse onto a ``Doc`` (of a :class:`spoolparse.Document`, or
straight from the parts ``Model._parse_text_parts`` gives); parsing is the library's, and the
objects are :mod:`spoolparse.document`'s.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional, Sequence

try:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token
    from spacy.util import get_lang_class
    from spacy.vocab import Vocab
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError(f"spoolparse.spacy needs spaCy 3: pip install 'spoolparse[spacy]' ({e})") from e

from ._spoolparse import Model
from .document import Document, _check_text, _pipe

__all__ = ["SpoolparseTokenizer", "load", "to_doc"]

# Per Doc, under one extension attribute: each sentence's first token and confidence, and each
# word's confidence and character span. Plain lists, which msgpack keeps as they are when spaCy
# serializes docs between processes; the Token and Span attributes read them (one entry per
# Doc, not three per token: setting token attributes one by one took a third of the time).
_DATA = "spoolparse"


def _word_field(k: int) -> Any:
    """The getter of a word's k-th field: None on a Doc that spoolparse did not make (the
    attributes are spaCy's, for every Doc of the process)."""

    def get(token: Token) -> Any:
        data = token.doc._.get(_DATA)
        return None if data is None else data["words"][token.i][k]

    return get


def _sentence_confidence(span: Span) -> Optional[float]:
    data = span.doc._.get(_DATA)
    for start, confidence in data["sentences"] if data is not None else ():
        if start == span.start:
            return confidence
    return None


def _register_extensions() -> None:
    if not Doc.has_extension(_DATA):
        Doc.set_extension(_DATA, default=None)
    for k, name in enumerate(("confidence", "start_char", "end_char")):
        if not Token.has_extension(name):
            Token.set_extension(name, getter=_word_field(k))
    if not Span.has_extension("confidence"):
        Span.set_extension("confidence", getter=_sentence_confidence)


# spaCy's extension attributes are its classes', for the whole process: set once, on import.
_register_extensions()


def to_doc(vocab: Vocab, document: Document) -> Doc:
    """The spaCy ``Doc`` of a :class:`spoolparse.Document` (see the module doc)."""
    rows = (
        (s.confidence, [(w.id, w.form, w.lemma, w.upos, w.xpos, w.feats, w.head, w.deprel, w.misc, w.confidence,
                         w.start_char, w.end_char) for w in s.words])
        for s in document.sentences
    )
    return _doc(vocab, document.text, rows)


def _doc(vocab: Vocab, text: str, sentences: Iterable[tuple[Optional[float], Sequence[tuple[Any, ...]]]]) -> Doc:
    """The ``Doc`` of ``text``'s sentences, each its confidence and its words as
    ``Model._parse_text_parts`` gives them (:class:`spoolparse.Word`'s fields, in order). A
    word ends its token unless the next one starts where it does (a multiword token's words
    share its span); a space follows a token the text has whitespace after. CoNLL-U's ``_`` (no
    value) is spaCy's empty string."""
    words: list[str] = []
    spaces: list[bool] = []
    heads: list[int] = []
    deps: list[str] = []
    pos: list[str] = []
    tags: list[str] = []
    lemmas: list[str] = []
    morphs: list[str] = []
    per_word: list[list[Any]] = []
    starts: list[list[Any]] = []
    length = len(text)
    for confidence, rows in sentences:
        base = len(words)
        starts.append([base, confidence])
        last = len(rows) - 1
        for k, (_, form, lemma, upos, xpos, feats, head, deprel, _, conf, start, end) in enumerate(rows):
            words.append(form)
            ends_token = k == last or rows[k + 1][10] != start
            spaces.append(ends_token and end < length and text[end].isspace())
            heads.append(base + head - 1 if head > 0 else base + k)
            deps.append(deprel)
            pos.append("" if upos == "_" else upos)
            tags.append("" if xpos == "_" else xpos)
            lemmas.append("" if lemma == "_" else lemma)
            morphs.append("" if feats == "_" else feats)
            per_word.append([conf, start, end])
    if not words:
        doc = Doc(vocab, words=[])
    else:
        doc = Doc(vocab, words=words, spaces=spaces, heads=heads, deps=deps, pos=pos, tags=tags, lemmas=lemmas,
                  morphs=morphs)
    doc._.set(_DATA, {"sentences": starts, "words": per_word})
    return doc


class SpoolparseTokenizer:
    """spaCy's tokenizer slot filled by the whole spoolparse pipeline: called with a text, it
    parses it (as ``Model.parse_text`` does) and returns the parsed ``Doc``. It pickles as the model's
    path, so that ``nlp.pipe(texts, n_process=N)`` opens the model once in each process."""

    def __init__(self, vocab: Vocab, model: str, sentences: str = "model") -> None:
        self.vocab = vocab
        self.model_path = str(model)
        self.sentences = sentences
        self._model: Optional[Model] = None

    @property
    def model(self) -> Model:
        if self._model is None:
            self._model = Model(self.model_path)
            if not self._model.has_tokenizer:
                raise ValueError(f"{self.model_path} has no tokenizer: train it with --tokenizer to parse raw text")
        return self._model

    def _parts(self, text: str) -> tuple[str, list[tuple[Any, ...]]]:
        """What the Doc of ``text`` is made of: its parse's parts, without the objects of
        :mod:`spoolparse.document` in between (a third of the time)."""
        _check_text(text)
        return text, self.model._parse_text_parts(text, sentences=self.sentences)[1]

    def _doc_of(self, parsed: tuple[str, list[tuple[Any, ...]]]) -> Doc:
        text, parts = parsed
        return _doc(self.vocab, text, ((p[2], p[6]) for p in parts))

    def __call__(self, text: str) -> Doc:
        return self._doc_of(self._parts(text))

    def pipe(self, texts: Iterable[str], batch_size: int = 64, threads: int = 1) -> Iterator[Doc]:
        """The Docs of ``texts`` in order, parsed by ``threads`` threads (parsing releases the GIL)."""
        yield from map(self._doc_of, _pipe(self._parts, texts, threads, batch_size))

    def __reduce__(self) -> tuple[Any, ...]:
        return (SpoolparseTokenizer, (self.vocab, self.model_path, self.sentences))

    # spaCy saves and loads a pipeline's tokenizer with the pipeline (nlp.to_disk): the model
    # file is not copied, its path is what is kept.
    def to_bytes(self, **_: Any) -> bytes:
        return self.model_path.encode()

    def from_bytes(self, data: bytes, **_: Any) -> "SpoolparseTokenizer":
        self.model_path, self._model = data.decode(), None
        return self

    def to_disk(self, path: Any, **_: Any) -> None:
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    def from_disk(self, path: Any, **_: Any) -> "SpoolparseTokenizer":
        with open(path, "rb") as f:
            return self.from_bytes(f.read())


# The relations of a nominal that heads a noun chunk, by UD's universal part (``nsubj:pass`` is
# ``nsubj``): spaCy's own iterators know the labels of its English models (``dobj``,
# ``nsubjpass``, ``pobj``), not UD's, and missed every ``obj`` and ``nsubj:pass``.
_CHUNK_RELATIONS = frozenset({"nsubj", "obj", "iobj", "obl", "nmod", "appos", "root", "conj", "vocative",
                              "dislocated", "expl", "xcomp"})
_NOMINALS = frozenset({"NOUN", "PROPN", "PRON"})
# Left dependents that are not part of a noun chunk: UD attaches prepositions (``case``) and
# conjunctions to the noun, where spaCy's English trees attach them above it.
_OUTSIDE_CHUNK = frozenset({"case", "mark", "cc", "punct", "acl", "advcl", "parataxis"})


def ud_noun_chunks(doclike: Any) -> Iterator[tuple[int, int, int]]:
    """spaCy's ``Doc.noun_chunks`` over UD trees: each noun, proper noun or pronoun in a
    nominal relation (:data:`_CHUNK_RELATIONS`), from its leftmost modifier (its determiner,
    adjectives, compounds, possessor, with their subtrees; not its preposition) to itself;
    nested chunks are left out."""
    doc = doclike.doc
    label = doc.vocab.strings.add("NP")
    end = -1
    for word in doclike:
        if word.pos_ not in _NOMINALS or word.dep_.split(":")[0] not in _CHUNK_RELATIONS:
            continue
        start = word.i
        for child in reversed(list(word.lefts)):
            if child.dep_.split(":")[0] in _OUTSIDE_CHUNK:
                break
            start = child.left_edge.i
        if start <= end:
            continue
        end = word.i
        yield start, word.i + 1, label


def load(model: str, lang: str = "xx", sentences: str = "model") -> Language:
    """A blank spaCy pipeline of language ``lang`` (``"xx"``: any) whose tokenizer is spoolparse
    with the model file ``model`` (it needs a tokenizer: ``train --tokenizer``); components added
    after it (an entity recognizer, a rule-based matcher) see spoolparse's analysis.
    ``sentences="lines"`` ends a sentence at every line end. The model is opened, and checked,
    now."""
    nlp = get_lang_class(lang)()
    nlp.vocab.get_noun_chunks = ud_noun_chunks
    tokenizer = SpoolparseTokenizer(nlp.vocab, model, sentences)
    tokenizer.model  # noqa: B018 - a missing or bad model is an error here, not at the first text
    nlp.tokenizer = tokenizer
    return nlp
