"""Raw text as documents (`spoolparse.document`): each word at its place in the text, with the
CoNLL-U's columns as attributes, and `pipe` giving what `parse_document` gives, in order."""

from __future__ import annotations

import itertools
import re
import unicodedata
from pathlib import Path
from typing import Iterator

import pytest
import spoolparse
from conftest import Data, decompress, note, raw_text, sentences

# Awkward raw text: three paragraphs (the blank line after "\r\n" too), a tab, two spaces, a
# contraction, and "Café" written with a combining accent (its form is NFC, RawForm= keeps it).
TEXT = "The dog barks. It isn't bad!\n\nVámonos al mar.  Yes\tno\r\n \n\n  Cafe\u0301?\n"

# CoNLL-U as parse_text writes it, by hand (columns separated by spaces here), for
# HAND_TEXT: a byte order mark, multiword tokens, RawForm, SpacesBefore, SpacesAfter, SpaceAfter=No.
HAND = r"""# newdoc
# newpar
# sent_id = hand-1
# text = Vámonos al mar.
# confidence = 0.900
1 Vámonos vamos VERB _ _ 0 root _ SpacesBefore=\s\s|RawForm=Va\u{301}monos|Conf=0.950
2-3 al _ _ _ _ _ _ _ _
2 a a ADP _ _ 4 case _ Conf=0.900
3 el el DET _ _ 4 det _ Conf=0.850
4 mar mar NOUN _ _ 1 obl _ SpaceAfter=No|Conf=0.800
5 . . PUNCT _ _ 1 punct _ SpacesAfter=\n\n|Conf=1.000

# newpar
# sent_id = hand-2
# text = It isn't bad!
# confidence = 0.750
1 It it PRON _ _ 4 nsubj _ SpacesAfter=\t|Conf=0.700
2-3 isn't _ _ _ _ _ _ _ _
2 is be AUX _ _ 4 cop _ Conf=0.800
3 n't not PART _ _ 4 advmod _ Conf=0.600
4 bad bad ADJ _ _ 0 root _ SpaceAfter=No|Conf=0.900
5 ! ! PUNCT _ _ 4 punct _ SpacesAfter=\n|Conf=0.750

"""
HAND_CONLLU = re.sub(r"(?m)^([^#\n].*)$", lambda m: m.group(1).replace(" ", "\t"), HAND)
HAND_TEXT = "\ufeff  Va\u0301monos al mar.\n\nIt\tisn't bad!\n"


def model_with_tokenizer(data: Data) -> spoolparse.Model:
    model = spoolparse.Model(data.model)
    if not model.has_tokenizer:
        note(f"{data.model} has no tokenizer: the document tests need one (train --tokenizer)")
        pytest.skip("the test model has no tokenizer")
    return model


def token_lines(block: str) -> list[list[str]]:
    return [line.split("\t") for line in block.splitlines() if line and not line.startswith("#")]


def comment(block: str, key: str) -> str:
    [value] = [line.split("=", 1)[1].strip() for line in block.splitlines() if line.startswith(f"# {key} =")]
    return value


def conf(misc: str) -> float:
    [value] = [float(e[5:]) for e in misc.split("|") if e.startswith("Conf=")]
    return value


def check_offsets(doc: spoolparse.Document) -> None:
    """Every token (and each of its words) at its place in the text, in order, with nothing but
    whitespace between tokens."""
    end = 0
    for sent in doc:
        assert (sent.start_char, sent.end_char) == (sent.tokens[0].start_char, sent.tokens[-1].end_char)
        for token in sent.tokens:
            assert doc.text[token.start_char : token.end_char] == token.text
            assert doc.text[end : token.start_char].strip("\ufeff \t\r\n") == ""
            assert {(w.start_char, w.end_char) for w in token.words} == {(token.start_char, token.end_char)}
            assert [w.id for w in token.words] == list(token.ids)
            end = token.end_char
        assert list(sent.words) == [w for t in sent.tokens for w in t.words]


def test_a_document_holds_the_conllu_columns_at_their_places_in_the_text(data: Data) -> None:
    model = model_with_tokenizer(data)
    conllu = model.parse_text(TEXT)
    doc = spoolparse.parse_document(model, TEXT)
    assert doc.text == TEXT and doc.to_conllu() == conllu
    blocks = sentences(conllu)
    assert len(doc) == len(blocks) > 1 and list(doc) == list(doc.sentences)
    check_offsets(doc)
    for sent, block in zip(doc, blocks):
        words = [cols for cols in token_lines(block) if cols[0].isdigit()]
        assert [(w.id, w.form, w.lemma, w.upos, w.xpos, w.feats, w.head, w.deprel, w.misc) for w in sent.words] == [
            (int(c[0]), c[1], c[2], c[3], c[4], c[5], int(c[6]), c[7], c[9]) for c in words
        ]
        assert [w.confidence for w in sent.words] == [conf(c[9]) for c in words]
        assert sent.sent_id == comment(block, "sent_id") and sent.text == comment(block, "text")
        # Unrounded; the CoNLL-U has it to three decimals.
        assert sent.confidence == pytest.approx(float(comment(block, "confidence")), abs=5e-4 + 1e-6)
        assert sent.confidence == pytest.approx(sum(conf(c[9]) for c in words) / len(words), abs=2e-3)
        assert sent.new_doc == ("# newdoc" in block) and sent.new_par == ("# newpar" in block)
    assert [s.new_doc for s in doc].count(True) == 1 and doc.sentences[0].new_doc
    assert [s.new_par for s in doc].count(True) == 3
    # The decomposed accent is the token's text; its form is NFC.
    [cafe] = [t for s in doc for t in s.tokens if "Cafe\u0301" in t.text]
    assert "RawForm=" in cafe.misc and cafe.words[0].form == unicodedata.normalize("NFC", cafe.text)


def test_a_multiword_tokens_words_share_its_span(data: Data) -> None:
    model = model_with_tokenizer(data)
    text = "It isn't bad, don't you think? Vámonos al mar.\n"
    doc = spoolparse.parse_document(model, text)
    check_offsets(doc)
    multiword = [t for s in doc for t in s.tokens if len(t.words) > 1]
    if not multiword:
        note("the test model made no multiword token of its text: test_document_from_hand_written_conllu covers them")
    for token in multiword:
        assert {text[w.start_char : w.end_char] for w in token.words} == {token.text}


def test_sentence_accepted_agrees_with_its_confidence(data: Data) -> None:
    doc = spoolparse.parse_document(model_with_tokenizer(data), TEXT)
    for sent in doc:
        assert sent.confidence is not None
        for threshold in (0.0, sent.confidence - 0.001, sent.confidence, sent.confidence + 0.001, 1.0):
            assert sent.accepted(threshold) == (sent.confidence >= threshold)
        assert sent.accepted(sent.confidence) and not sent.accepted(sent.confidence + 0.001)


def test_pipe_gives_what_parse_document_gives_in_order(data: Data) -> None:
    model = model_with_tokenizer(data)
    texts = [TEXT, "Yes.\n", "The cat sat on the mat. It slept", "  \n", "Vámonos al mar."] * 8
    expected = [spoolparse.parse_document(model, t) for t in texts]
    assert list(spoolparse.pipe(model, texts)) == expected
    assert list(spoolparse.pipe(model, iter(texts), threads=2, batch_size=3)) == expected
    lines = "show me flights\nThe dog barks. It sees cats!\n"
    assert list(spoolparse.pipe(model, [lines], threads=2, sentences="lines")) == [
        spoolparse.parse_document(model, lines, sentences="lines")
    ]
    with pytest.raises(ValueError, match="at least 1"):
        spoolparse.pipe(model, texts, threads=0)


def test_pipe_raises_on_a_text_that_is_not_a_str_after_the_documents_before_it(data: Data) -> None:
    model = model_with_tokenizer(data)
    for threads in (1, 2):
        docs = spoolparse.pipe(model, ["A dog.", "A cat.", None, "Never."], threads=threads, batch_size=1)  # type: ignore[list-item]
        assert [next(docs).text, next(docs).text] == ["A dog.", "A cat."]
        with pytest.raises(TypeError, match=r"texts\[2\] is NoneType, not str"):
            next(docs)


def test_pipe_streams_an_endless_iterable_in_bounded_memory(data: Data) -> None:
    model = model_with_tokenizer(data)
    taken = 0

    def endless() -> Iterator[str]:
        nonlocal taken
        for n in itertools.count():
            taken += 1
            yield f"Text number {n} is here."

    docs = spoolparse.pipe(model, endless(), threads=2, batch_size=2)
    assert [d.text for d in itertools.islice(docs, 5)] == [f"Text number {n} is here." for n in range(5)]
    assert taken <= 5 + 2 * 2
    docs.close()  # type: ignore[attr-defined]


def test_document_from_hand_written_conllu() -> None:
    """No model: the offsets of CoNLL-U written by hand as parse_text writes it."""
    doc = spoolparse.document_from_conllu(HAND_CONLLU, HAND_TEXT)
    check_offsets(doc)
    assert doc.to_conllu() == HAND_CONLLU and len(doc) == 2
    assert [(t.text, t.start_char, t.end_char) for s in doc for t in s.tokens] == [
        ("Va\u0301monos", 3, 11), ("al", 12, 14), ("mar", 15, 18), (".", 18, 19),
        ("It", 21, 23), ("isn't", 24, 29), ("bad", 30, 33), ("!", 33, 34),
    ]  # fmt: skip
    first, second = doc
    assert (first.sent_id, first.text, first.confidence, first.new_doc, first.new_par) == (
        "hand-1", "Vámonos al mar.", 0.9, True, True,
    )  # fmt: skip
    assert (second.sent_id, second.confidence, second.new_doc, second.new_par) == ("hand-2", 0.75, False, True)
    assert (first.start_char, first.end_char, second.start_char, second.end_char) == (3, 19, 21, 34)
    assert first.words[0].form == "Vámonos" == unicodedata.normalize("NFC", first.tokens[0].text)
    assert first.words[1] == spoolparse.Word(2, "a", "a", "ADP", "_", "_", 4, "case", "Conf=0.900", 0.9, 12, 14)
    assert [t.ids for t in second.tokens] == [(1,), (2, 3), (4,), (5,)] and second.tokens[1].misc == "_"
    assert [w.confidence for w in second.words] == [0.7, 0.8, 0.6, 0.9, 0.75]
    assert [first.accepted(t) for t in (0.899, 0.9, 0.901)] == [True, True, False]
    # A sentence judged another language's (`# other_language`) is never accepted.
    assert not first.other_language
    judged = HAND_CONLLU.replace("# sent_id = hand-2\n", "# sent_id = hand-2\n# other_language = of its 4 words, 0 among …\n")
    assert judged != HAND_CONLLU
    other = spoolparse.document_from_conllu(judged, HAND_TEXT).sentences[1]
    assert other.other_language and other.confidence == 0.75 and not other.accepted(0.0)
    # Whitespace the reader did not keep (runs beyond 8192 characters) is skipped all the same.
    long = HAND_TEXT.replace("It\t", "It\t" + " " * 20000)
    assert spoolparse.document_from_conllu(HAND_CONLLU, long).sentences[1].end_char == 34 + 20000
    with pytest.raises(ValueError, match=r"line 21: token 'bad' is not in the text at character 30"):
        spoolparse.document_from_conllu(HAND_CONLLU, HAND_TEXT.replace("bad", "sad"))
    with pytest.raises(ValueError, match="the text goes on after the CoNLL-U's last token, at character 35"):
        spoolparse.document_from_conllu(HAND_CONLLU, HAND_TEXT + "More.")
    no_confidence = re.sub(r"(?m)\t$", "\t_", re.sub(r"\|?Conf=[0-9.]+|# confidence = .*\n", "", HAND_CONLLU))
    bare = spoolparse.document_from_conllu(no_confidence, HAND_TEXT)
    assert bare.sentences[0].confidence is None and bare.sentences[0].words[1].confidence is None
    with pytest.raises(ValueError, match="no confidence"):
        bare.sentences[0].accepted(0.5)


def test_documents_agree_with_spoolparse_parse_on_every_column_and_confidence(data: Data, tmp_path: Path) -> None:
    """The raw text of a dev slice (en_ewt's, where the shared data is), its paragraphs as the
    treebank marks them: the objects hold what `spoolparse parse` writes, word for word."""
    model = model_with_tokenizer(data)
    text = raw_text(decompress(data.inputs / "b.conllu.zst").decode())
    raw = tmp_path / "dev.raw"
    raw.write_text(text)
    cli = data.run("parse", "--model", data.model, raw, "--threads", "2").stdout.decode()
    cli_doc = spoolparse.document_from_conllu(cli, text)
    doc = spoolparse.parse_document(model, text)
    assert len(doc) == len(cli_doc) > 20
    words = 0
    for ours, theirs in zip(doc, cli_doc):
        assert (ours.text, ours.new_par, ours.new_doc) == (theirs.text, theirs.new_par, theirs.new_doc)
        assert ours.confidence == pytest.approx(theirs.confidence, abs=5e-4 + 1e-6)
        # The same words, tags, lemmas, features, heads, labels, confidences and offsets; the
        # ids differ only by the input's name (`<string>-N` against `dev.raw-N`).
        assert ours.words == theirs.words
        assert (ours.sent_id or "").rsplit("-", 1)[1] == (theirs.sent_id or "").rsplit("-", 1)[1]
        words += len(ours.words)
    print(f"documents and `spoolparse parse` agree on {len(doc)} sentences, {words} words")
    # `accepted` keeps what `--min-confidence` keeps, at thresholds that are written values
    # (where a rounded confidence would disagree with the unrounded one).
    for threshold in sorted({s.confidence for s in cli_doc})[5::7][:4]:
        kept = tmp_path / "kept.conllu"
        data.run("parse", "--model", data.model, raw, "--min-confidence", str(threshold), "--rejected",
                 tmp_path / "low.conllu", "--output", kept, "--overwrite")
        cli_kept = [line[len("# text = "):] for line in kept.read_text().splitlines() if line.startswith("# text = ")]
        assert [s.text for s in doc if s.accepted(threshold)] == cli_kept and cli_kept, threshold


def test_bad_input_raises_a_clear_python_exception(data: Data) -> None:
    model = model_with_tokenizer(data)
    with pytest.raises(TypeError, match="text must be a str, not bytes"):
        spoolparse.parse_document(model, b"bytes are not text")  # type: ignore[arg-type]
    # A lone surrogate is no UTF-8 at all: refused where the text enters the extension.
    with pytest.raises(UnicodeEncodeError):
        spoolparse.parse_document(model, "half a pair \ud800 of surrogates.")
    assert len(spoolparse.parse_document(model, "")) == 0
    # 100 MB: refused at once, not after minutes and gigabytes (spaCy's limit, a million
    # characters); lifted on request.
    huge = "x" * 100_000_000
    with pytest.raises(ValueError, match="text of 100,000,000 characters is longer than max_length=1,000,000"):
        spoolparse.parse_document(model, huge)
    with pytest.raises(ValueError, match="longer than max_length=10"):
        next(spoolparse.pipe(model, ["A short one.", "Eleven characters"], max_length=10))
    assert len(spoolparse.parse_document(model, "Eleven characters.", max_length=None)) == 1
    # One string is not an iterable of texts (it gave a document per character).
    with pytest.raises(TypeError, match="texts must be an iterable of str, not one str"):
        spoolparse.pipe(model, "A text, not a list of them.")  # type: ignore[arg-type]
