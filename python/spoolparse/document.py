"""Documents as objects: raw text parsed into a :class:`Document` of :class:`Sentence`,
:class:`Token` and :class:`Word` objects, each with its character offsets in the text.

This module owns the reading of the CoNLL-U that ``Model.parse_text`` writes (docs/formats.md,
"Raw text") into those objects, the alignment of its tokens with the input string, and the
functions that parse one text (:func:`parse_document`) or a stream of them (:func:`pipe`). It is
pure Python on top of ``Model.parse_text``: the Rust library stays the only parser.

    >>> import spoolparse
    >>> model = spoolparse.Model("en_ewt.model")                       # doctest: +SKIP
    >>> doc = spoolparse.parse_document(model, "It isn't bad.\\n")     # doctest: +SKIP
    >>> [(w.form, w.head, w.start_char, w.end_char) for w in doc.sentences[0].words]  # doctest: +SKIP
    [('It', 4, 0, 2), ('is', 4, 3, 8), ("n't", 4, 3, 8), ('bad', 0, 9, 12), ('.', 4, 12, 13)]
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import starmap
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, Optional, TypeVar

if TYPE_CHECKING:
    from ._spoolparse import Model

__all__ = ["Document", "Sentence", "Token", "Word", "document_from_conllu", "parse_document", "pipe"]

# Slotted records where the dataclass can make them (Python 3.10 and later).
_SLOTS: dict[str, Any] = {"slots": True} if sys.version_info >= (3, 10) else {}

_Sentences = Literal["model", "lines"]
_T = TypeVar("_T")


@dataclass(frozen=True, **_SLOTS)
class Word:
    """A syntactic word: its CoNLL-U columns as written (``"_"`` for none), ``head`` 0 for the
    root, ``confidence`` its arc's (MISC ``Conf=``, None without it), and the character offsets
    of its token in the text: the words of a multiword token share the token's span."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int
    deprel: str
    misc: str
    confidence: Optional[float]
    start_char: int
    end_char: int


@dataclass(frozen=True, **_SLOTS)
class Token:
    """A token of the text: one word, or a multiword token (``ids`` of its words, ``misc`` of
    its range line). ``text`` is its characters as written, ``text == document.text[start_char:
    end_char]`` (``RawForm=`` where the form had to be normalized, else the form)."""

    ids: tuple[int, ...]
    text: str
    start_char: int
    end_char: int
    misc: str
    words: tuple[Word, ...]


@dataclass(frozen=True, **_SLOTS)
class Sentence:
    """A sentence: ``sent_id`` and ``text`` from its ``# sent_id`` and ``# text`` comments (None
    without them; ``text`` has each whitespace run as one space), ``confidence`` its mean arc
    confidence (unrounded from :func:`parse_document`, as ``--min-confidence`` compares it;
    ``# confidence``, three decimals, from :func:`document_from_conllu`), whether it starts a
    paragraph or a document (``# newpar``, ``# newdoc``), and its span in the text, from its
    first token's start to its last's end; ``other_language``: judged another language's than
    the model's (``# other_language``), so never accepted."""

    sent_id: Optional[str]
    text: Optional[str]
    tokens: tuple[Token, ...]
    words: tuple[Word, ...] = field(repr=False)  # the tokens' words, in order
    confidence: Optional[float]
    new_par: bool
    new_doc: bool
    start_char: int
    end_char: int
    other_language: bool = False

    def accepted(self, threshold: float) -> bool:
        """Whether the sentence's confidence is at least ``threshold`` and it is of the model's
        language: what ``--min-confidence`` keeps, for a sentence of :func:`parse_document` (one
        read from CoNLL-U has the rounded value, which may differ within 0.0005 of it);
        ValueError for a sentence parsed without confidences."""
        if self.confidence is None:
            raise ValueError(f"sentence {self.sent_id}: no confidence (parsed with confidence=False?)")
        return self.confidence >= threshold and not self.other_language


@dataclass(frozen=True, **_SLOTS)
class Document:
    """A parsed text: ``text`` the input string, ``sentences`` in order; iterating and ``len``
    go over the sentences; :meth:`to_conllu` gives the CoNLL-U it was read from."""

    text: str
    sentences: tuple[Sentence, ...]
    conllu: str = field(repr=False)

    def __iter__(self) -> Iterator[Sentence]:
        return iter(self.sentences)

    def __len__(self) -> int:
        return len(self.sentences)

    def to_conllu(self) -> str:
        """The CoNLL-U the document was built from, unchanged."""
        return self.conllu


_ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]*)\}|(.))", re.DOTALL)
_ESCAPES = {"s": " ", "t": "\t", "n": "\n", "r": "\r", "p": "|", "\\": "\\"}


def _unescape(value: str) -> str:
    r"""A MISC value as written from raw text (``\s \t \n \r \p \\ \u{X}``) unescaped."""

    def one(m: re.Match[str]) -> str:
        if m.group(2) is not None:
            return _ESCAPES.get(m.group(2), m.group(2))
        return chr(int(m.group(1), 16)) if m.group(1) else ""

    return _ESCAPE.sub(one, value)


def _is_space(c: str) -> bool:
    """What the tokenizer takes for whitespace (src/model/tokenizer.rs ``is_space``): never part
    of a token."""
    return c.isspace() or c == "\ufeff" or unicodedata.category(c) == "Cc"


def _skip(text: str, i: int) -> int:
    """The first character at or after ``i`` that is not whitespace (or ``len(text)``)."""
    while i < len(text) and _is_space(text[i]):
        i += 1
    return i


def _entry(misc: str, key: str) -> Optional[str]:
    """The value of the MISC column's entry ``key``, None without it (read without splitting
    the column where it cannot be there: a third of building a document went to splitting
    every MISC column into a dictionary)."""
    if key not in misc:
        return None
    prefix = key + "="
    return next((e[len(prefix) :] for e in misc.split("|") if e.startswith(prefix)), None)


def _word(cols: list[str], start: int, end: int) -> Word:
    """The word of a CoNLL-U line's columns, spanning ``start:end`` of the text."""
    conf = _entry(cols[9], "Conf")
    return Word(
        int(cols[0]), cols[1], cols[2], cols[3], cols[4], cols[5], int(cols[6]), cols[7], cols[9],
        float(conf) if conf is not None else None, start, end,
    )


class _Reader:
    """Reads CoNLL-U sentences, aligning each token with ``text`` from ``cursor`` on."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cursor = 0

    def locate(self, raw: str) -> tuple[int, int]:
        """The span of ``raw`` in the text at the cursor, past whitespace; moves the cursor."""
        start = _skip(self.text, self.cursor)
        if not raw or not self.text.startswith(raw, start):
            found = self.text[start : start + len(raw) + 10]
            raise ValueError(
                f"token {raw!r} is not in the text at character {start} (the text has {found!r} "
                "there): the CoNLL-U was not parsed from this text"
            )
        self.cursor = start + len(raw)
        return start, self.cursor

    def token(self, rows: list[tuple[int, list[str]]], i: int) -> tuple[Optional[Token], int]:
        """The token whose line is ``rows[i]`` (None for an empty node), and how many lines it
        takes: a multiword token's words follow its range line."""
        cols = rows[i][1]
        if "." in cols[0]:
            return None, 1
        first, _, last = cols[0].partition("-")
        ids = tuple(range(int(first), int(last or first) + 1))
        parts = [c for _, c in rows[i + 1 : i + 1 + len(ids)]] if last else [cols]
        if [c[0] for c in parts] != [str(n) for n in ids]:
            raise ValueError(f"the words of multiword token {cols[0]} do not follow it")
        raw_form = _entry(cols[9], "RawForm")
        raw = _unescape(raw_form) if raw_form is not None else cols[1]
        start, end = self.locate(raw)
        words = tuple(_word(c, start, end) for c in parts)
        return Token(ids, raw, start, end, cols[9], words), 1 + len(ids) if last else 1

    def sentence(self, comments: list[str], rows: list[tuple[int, list[str]]]) -> Sentence:
        """One sentence from its comment lines and its numbered token lines."""
        meta: dict[str, str] = {}
        for comment in comments:
            key, _, value = comment[1:].partition("=")
            meta.setdefault(key.strip(), value.strip())
        tokens: list[Token] = []
        i = 0
        while i < len(rows):
            try:
                token, taken = self.token(rows, i)
            except ValueError as e:
                raise ValueError(f"CoNLL-U line {rows[i][0]}: {e}") from None
            i += taken
            if token is not None:
                tokens.append(token)
        if not tokens:
            raise ValueError(f"CoNLL-U line {rows[0][0]}: a sentence without tokens")
        names = {key.split(" ", 1)[0] for key in meta}
        return Sentence(
            sent_id=meta.get("sent_id"),
            text=meta.get("text"),
            tokens=tuple(tokens),
            words=tuple(w for t in tokens for w in t.words),
            confidence=float(meta["confidence"]) if "confidence" in meta else None,
            new_par="newpar" in names,
            new_doc="newdoc" in names,
            start_char=tokens[0].start_char,
            end_char=tokens[-1].end_char,
            other_language="other_language" in names,
        )


def document_from_conllu(conllu: str, text: str) -> Document:
    """The :class:`Document` of ``conllu``, the CoNLL-U that ``Model.parse_text(text)`` wrote.

    Offsets come from walking ``text``: each token (its ``RawForm=`` unescaped where it has one,
    else its form) must come next in the text, after whitespace (the reader's whitespace,
    control characters and a byte order mark included, however much of it: MISC keeps at most
    8192 characters of each end of a run, and nothing of a byte order mark at the start). Text
    that does not match, or malformed CoNLL-U, raises ValueError naming the CoNLL-U line.
    """
    reader = _Reader(text)
    sentences: list[Sentence] = []
    comments: list[str] = []
    rows: list[tuple[int, list[str]]] = []
    for number, line in enumerate(conllu.split("\n") + [""], start=1):
        line = line.rstrip("\r")
        if not line:
            if rows:
                sentences.append(reader.sentence(comments, rows))
                comments, rows = [], []
        elif line.startswith("#"):
            comments.append(line)
        else:
            cols = line.split("\t")
            if len(cols) != 10:
                raise ValueError(f"CoNLL-U line {number}: {len(cols)} tab-separated columns, not 10")
            rows.append((number, cols))
    rest = _skip(text, reader.cursor)
    if rest < len(text):
        raise ValueError(
            f"the text goes on after the CoNLL-U's last token, at character {rest} "
            f"({text[rest : rest + 20]!r}): the CoNLL-U was not parsed from this text"
        )
    return Document(text, tuple(sentences), conllu)


#: The longest text :func:`parse_document` takes by default, in characters: spaCy's limit
#: (``nlp.max_length``), for the same reason. A document holds every word as Python objects,
#: all at once: about 1.4 kB of the process's memory a word of English (0.6 kB of them live
#: objects), 280 MB for a million characters.
MAX_LENGTH = 1_000_000


def parse_document(
    model: Model, text: str, *, sentences: _Sentences = "model", max_length: Optional[int] = MAX_LENGTH
) -> Document:
    """Parses raw text (a model with a tokenizer; ``sentences="lines"`` ends a sentence at
    every line end) into a :class:`Document`: the same as ``document_from_conllu(
    model.parse_text(text), text)`` but for each sentence's ``confidence``, here unrounded
    (what ``--min-confidence`` compares), and built without reading the CoNLL-U in Python (the
    library finds the tokens in the text: half the time).

    A text longer than ``max_length`` characters raises ValueError before anything is parsed:
    its objects might not fit in memory (:data:`MAX_LENGTH`); parse it in pieces with
    :func:`pipe`, or as a file with ``Model.parse_file``; ``max_length=None`` lifts the limit."""
    _check_text(text)
    if max_length is not None and len(text) > max_length:
        raise ValueError(
            f"text of {len(text):,} characters is longer than max_length={max_length:,}: a Document holds "
            "every word as Python objects, all at once; parse it in pieces with spoolparse.pipe(model, "
            "paragraphs), or as a file with Model.parse_file, or pass a larger max_length"
        )
    conllu, parts = model._parse_text_parts(text, sentences=sentences)
    return Document(text, tuple(_sentence_of_parts(text, p) for p in parts), conllu)


def _sentence_of_parts(text: str, parts: tuple[Any, ...]) -> Sentence:
    """A :class:`Sentence` of one sentence's parts, as ``Model._parse_text_parts`` gives them."""
    sent_id, sentence_text, confidence, new_par, new_doc, token_parts, word_parts, other_language = parts
    words = tuple(starmap(Word, word_parts))
    # A token's words are numbered in a row.
    tokens = tuple(
        Token((words[first].id,), text[start:end], start, end, misc, (words[first],)) if count == 1 else
        Token(tuple(range(words[first].id, words[first].id + count)), text[start:end], start, end, misc,
              words[first : first + count])
        for first, count, start, end, misc in token_parts
    )
    return Sentence(sent_id, sentence_text, tokens, words, confidence, new_par, new_doc,
                    tokens[0].start_char, tokens[-1].end_char, other_language)


def _check_text(text: object) -> None:
    """TypeError unless ``text`` is a str (bytes are not text)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")


def _text_at(position: int, item: object) -> str:
    """``item``, the text at ``position`` of :func:`pipe`'s input, or TypeError."""
    if not isinstance(item, str):
        raise TypeError(f"texts[{position}] is {type(item).__name__}, not str")
    return item


def pipe(
    model: Model,
    texts: Iterable[str],
    *,
    threads: int = 1,
    batch_size: int = 64,
    sentences: _Sentences = "model",
    max_length: Optional[int] = MAX_LENGTH,
) -> Iterator[Document]:
    """The :class:`Document` of each text of ``texts``, lazily and in input order, as
    :func:`parse_document` makes it.

    With ``threads`` > 1 the texts are parsed by a thread pool (parsing releases the GIL), at
    most ``threads * batch_size`` of them taken ahead of the one yielded, so that an endless
    iterable streams in bounded memory. An item that is not a str raises TypeError naming its
    position once the documents before it have been yielded; a parsing error is raised where
    its document would have come.
    """
    parse = partial(parse_document, model, sentences=sentences, max_length=max_length)
    return _pipe(parse, texts, threads, batch_size)


def _pipe(parse: Callable[[str], _T], texts: Iterable[object], threads: int, batch_size: int) -> Iterator[_T]:
    """``parse`` of each text, as :func:`pipe` gives documents (``spoolparse.spacy``'s pipe
    too, with another ``parse``); bad ``threads`` or ``batch_size`` raise at once."""
    if threads < 1 or batch_size < 1:
        raise ValueError(f"threads and batch_size must be at least 1 (got {threads}, {batch_size})")
    # A str is an iterable of texts too: one document per character.
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"texts must be an iterable of str, not one {type(texts).__name__}: "
                        "pipe(model, [text]) for one text, or parse_document(model, text)")
    return _stream(parse, texts, threads, threads * batch_size)


def _stream(parse: Callable[[str], _T], texts: Iterable[object], threads: int, ahead: int) -> Iterator[_T]:
    """:func:`_pipe`'s generator, its arguments checked: ``ahead`` texts at most in the pool."""
    if threads == 1:
        yield from (parse(_text_at(i, item)) for i, item in enumerate(texts))
        return
    bad: Optional[TypeError] = None
    with ThreadPoolExecutor(threads, thread_name_prefix="spoolparse-pipe") as pool:
        window: deque[Future[_T]] = deque()
        try:
            for i, item in enumerate(texts):
                try:
                    text = _text_at(i, item)
                except TypeError as e:
                    bad = e
                    break
                window.append(pool.submit(parse, text))
                if len(window) >= ahead:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        finally:  # stopped early (by the consumer, or an error): parse nothing more
            for future in window:
                future.cancel()
    if bad is not None:
        raise bad
