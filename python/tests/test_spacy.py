"""spoolparse as a spaCy pipeline (`spoolparse.spacy`): each Doc is the Document that
`parse_document` makes, word for word and column for column, with confidences as extension
attributes; spaCy's matchers, displaCy, `nlp.pipe` across processes and pickling work on it."""

from __future__ import annotations

import pickle
import unicodedata

import pytest
import spoolparse
from conftest import Data, decompress, note, raw_text
from test_document import TEXT, model_with_tokenizer

try:
    import spacy  # noqa: F401
except ImportError:  # scripts/python-test.sh installs it: python/requirements-dev.txt
    note("spaCy is not installed: pip install -r python/requirements-dev.txt")
    pytest.skip("spaCy is not installed", allow_module_level=True)

import spoolparse.spacy  # noqa: E402
from spacy import displacy  # noqa: E402
from spacy.matcher import DependencyMatcher, Matcher  # noqa: E402

TEXTS = [
    "The committee approved the new budget on Tuesday. Critics called it a mistake.",
    "We bought two tickets to Boston.\n\nThe flight leaves at noon.",
    "It isn't bad, don't you think?",
]


def rows(doc) -> list[tuple]:
    return [(t.text, t.pos_, t.tag_, t.lemma_, t.morph.to_dict(), t.dep_, t.head.i, t._.confidence) for t in doc]


def feats(column: str) -> dict[str, str]:
    """FEATS as spaCy's ``morph.to_dict()`` gives them (its string sorts them its own way:
    ``NumForm=Word|NumType=Frac|Number=Sing`` for UD's ``Number=Sing|NumForm=Word|NumType=Frac``)."""
    return dict(f.split("=", 1) for f in column.split("|")) if column != "_" else {}


def expected(document: spoolparse.Document) -> list[tuple]:
    """What each word of ``document`` must be as a spaCy token (``_`` is spaCy's empty string)."""
    out, base = [], 0
    for sent in document:
        for w in sent.words:
            empty = lambda v: "" if v == "_" else v  # noqa: E731
            head = base + w.head - 1 if w.head else base + w.id - 1
            out.append((w.form, empty(w.upos), empty(w.xpos), empty(w.lemma), feats(w.feats), w.deprel, head,
                        w.confidence))
        base += len(sent.words)
    return out


@pytest.fixture(scope="module")
def nlp(data: Data):
    model_with_tokenizer(data)
    return spoolparse.spacy.load(str(data.model), lang="en")


def test_a_doc_is_the_document_word_for_word_with_confidences_and_offsets(nlp, data: Data) -> None:
    model = spoolparse.Model(data.model)
    for text in TEXTS + [TEXT]:
        document = spoolparse.parse_document(model, text)
        doc = nlp(text)
        assert rows(doc) == expected(document)
        words = [w for s in document for w in s.words]
        assert [(t._.start_char, t._.end_char) for t in doc] == [(w.start_char, w.end_char) for w in words]
        assert [(s.start, s._.confidence) for s in doc.sents] == [
            (sum(len(p.words) for p in document.sentences[:i]), s.confidence) for i, s in enumerate(document)
        ]
        # A one-word token is its text (NFC), followed by a space where the input has whitespace.
        last = {t.words[-1] for s in document for t in s.tokens}
        for token, word in zip(doc, words):
            end = word.end_char
            if word in last:
                assert token.whitespace_ == (" " if end < len(text) and text[end].isspace() else "")
            if len([w for w in words if (w.start_char, w.end_char) == (word.start_char, end)]) == 1:
                assert unicodedata.normalize("NFC", text[word.start_char:end]) == token.text


def test_a_doc_agrees_with_spoolparse_parse_on_every_word_of_a_dev_slice(nlp, data: Data, tmp_path) -> None:
    """The raw text of a dev slice (en_ewt's, where the shared data is) through spaCy and through
    `spoolparse parse`: the same words, tags, lemmas, features, heads, labels and confidences."""
    text = raw_text(decompress(data.inputs / "b.conllu.zst").decode())
    raw = tmp_path / "dev.raw"
    raw.write_text(text)
    cli = data.run("parse", "--model", data.model, raw, "--threads", "2").stdout.decode()
    doc = nlp(text)
    assert rows(doc) == expected(spoolparse.document_from_conllu(cli, text))
    cli_sentences = [s.confidence for s in spoolparse.document_from_conllu(cli, text)]
    # Unrounded; the CoNLL-U has them to three decimals.
    assert [s._.confidence for s in doc.sents] == pytest.approx(cli_sentences, abs=5e-4 + 1e-6)
    assert len(cli_sentences) > 20
    print(f"spaCy and `spoolparse parse` agree on {len(cli_sentences)} sentences, {len(doc)} words")


def test_spacy_s_matchers_and_displacy_read_spoolparse_s_analysis(nlp) -> None:
    doc = nlp(TEXTS[0] + " " + TEXTS[1])
    svo = DependencyMatcher(nlp.vocab)
    svo.add("SVO", [[
        {"RIGHT_ID": "verb", "RIGHT_ATTRS": {"POS": "VERB"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "subject", "RIGHT_ATTRS": {"DEP": "nsubj"}},
        {"LEFT_ID": "verb", "REL_OP": ">", "RIGHT_ID": "object", "RIGHT_ATTRS": {"DEP": "obj"}},
    ]])
    found = {tuple(doc[i].i for i in ids) for _, ids in svo(doc)}
    # Every (verb, subject, object) of the tree, as read from the tree itself.
    tree = {(t.head.i, s.i, t.i) for t in doc if t.dep_ == "obj" and t.head.pos_ == "VERB"
            for s in t.head.children if s.dep_ == "nsubj"}
    assert found == tree and found, [(t.text, t.dep_, t.head.text) for t in doc]
    lemmas = Matcher(nlp.vocab)
    lemmas.add("BUY", [[{"LEMMA": "buy"}]])
    assert [doc[s:e].text for _, s, e in lemmas(doc)] == [t.text for t in doc if t.lemma_ == "buy"]
    svg = displacy.render(doc, style="dep", options={"collapse_punct": False})
    assert svg.startswith("<svg") and all(f">{t.text}</tspan>" in svg for t in doc if t.text not in "&<>")


def test_nlp_pipe_across_processes_and_a_pickled_pipeline_give_the_same_docs(nlp) -> None:
    texts = TEXTS * 3
    one = [rows(d) for d in nlp.pipe(texts)]
    assert one == [rows(nlp(t)) for t in texts]
    two = list(nlp.pipe(texts, n_process=2, batch_size=2))
    assert [rows(d) for d in two] == one
    assert [[s._.confidence for s in d.sents] for d in two] == [[s._.confidence for s in nlp(t).sents] for t in texts]
    again = pickle.loads(pickle.dumps(nlp))
    assert [rows(again(t)) for t in texts] == one
    # A Doc saved and read back keeps its confidences (they live in its user data).
    doc = nlp(texts[0])
    saved = spacy.tokens.Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert rows(saved) == rows(doc) and [s._.confidence for s in saved.sents] == [s._.confidence for s in doc.sents]
    threaded = nlp.tokenizer.pipe(texts, threads=2)
    assert [rows(d) for d in threaded] == one


def test_bad_input_and_a_model_without_a_tokenizer_are_clear_errors(nlp, data: Data, tmp_path) -> None:
    with pytest.raises(TypeError, match="str"):
        nlp.tokenizer(b"bytes")
    # The attributes are spaCy's, on every Doc: None on one spoolparse did not make.
    other = spacy.blank("en")("The cat sat.")
    assert [t._.confidence for t in other] == [None] * 4 and other[0:2]._.confidence is None
    assert len(nlp("")) == 0
    with pytest.raises(Exception, match="missing.model"):
        spoolparse.spacy.load(str(tmp_path / "missing.model"))


def test_noun_chunks_follow_ud_relations(nlp) -> None:
    """``doc.noun_chunks`` over UD labels: spaCy's English iterator knew only its own models'
    (``dobj``, ``nsubjpass``) and missed every ``obj`` and ``nsubj:pass``; a preposition
    (UD's ``case``, a child of the noun) stays out of the chunk."""
    from spacy.tokens import Doc
    words = ["The", "new", "budget", "was", "approved", "on", "Tuesday", ";", "critics", "called", "it", "a",
             "mistake", "."]
    pos = ["DET", "ADJ", "NOUN", "AUX", "VERB", "ADP", "PROPN", "PUNCT", "NOUN", "VERB", "PRON", "DET", "NOUN",
           "PUNCT"]
    heads = [2, 2, 4, 4, 4, 6, 4, 9, 9, 4, 9, 12, 9, 4]
    deps = ["det", "amod", "nsubj:pass", "aux:pass", "root", "case", "obl", "punct", "nsubj", "parataxis", "obj",
            "det", "xcomp", "punct"]
    doc = Doc(nlp.vocab, words=words, pos=pos, heads=heads, deps=deps)
    assert [c.text for c in doc.noun_chunks] == ["The new budget", "Tuesday", "critics", "it", "a mistake"]
