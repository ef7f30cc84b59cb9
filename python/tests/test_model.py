"""The Python package against the `spoolparse` command line: same parses, same bytes."""

from __future__ import annotations

import os
import pickle
import re
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import spoolparse
from conftest import FIXTURES, Data, decompress, sentences


def tokens_of(conllu: str) -> list[list[str]]:
    """The FORM of every syntactic word, per sentence."""
    rows = [[ln.split("\t") for ln in s.splitlines() if ln and not ln.startswith("#")] for s in sentences(conllu)]
    return [[cols[1] for cols in s if cols[0].isdigit()] for s in rows]


def test_open_reports_the_model(data: Data) -> None:
    model = spoolparse.Model(data.model)
    assert model.has_tagger
    assert "root" in model.labels
    assert re.fullmatch(r"[0-9a-f]{8}", model.fingerprint)
    assert model.path == data.model
    assert model.system.startswith("arc-eager")


def test_a_missing_or_corrupt_model_raises(data: Data, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nothing-here.model"):
        spoolparse.Model(tmp_path / "nothing-here.model")
    corrupt = tmp_path / "corrupt.model"
    raw = bytearray(data.model.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # in the weights, which only verification reads
    corrupt.write_bytes(bytes(raw))
    with pytest.raises(spoolparse.ModelError, match="corrupt.model"):
        spoolparse.Model(corrupt)
    spoolparse.Model(corrupt, verify=False)  # opens: the header and metadata are intact
    not_a_model = tmp_path / "text.model"
    not_a_model.write_text("hello\n")
    with pytest.raises(spoolparse.ModelError):
        spoolparse.Model(not_a_model)


def test_parse_gives_trees_with_confidences_and_predicted_tags(data: Data) -> None:
    model = spoolparse.Model(data.model)
    sents = tokens_of((data.inputs / "a.conllu").read_text())[:30]
    parses = model.parse(sents)
    assert len(parses) == len(sents)
    for tokens, p in zip(sents, parses):
        n = len(tokens)
        assert p.words == tokens and len(p) == n
        assert len(p.heads) == len(p.labels) == len(p.confidence) == n
        assert all(0 <= h <= n for h in p.heads)
        assert p.heads.count(0) == 1 and p.labels[p.heads.index(0)] == "root"
        assert set(p.labels) <= set(model.labels)
        assert all(0.0 <= c <= 1.0 for c in p.confidence)
        assert p.sentence_confidence == pytest.approx(sum(p.confidence) / n, rel=1e-5)
        assert 0.0 < p.tree_prob <= 1.0
        assert p.upos is not None and p.xpos is not None and len(p.upos) == n
        # The model was trained on a treebank with lemmas and FEATS: it predicts both.
        assert p.lemmas is not None and len(p.lemmas) == n and all(lemma not in ("", "_") for lemma in p.lemmas)
        assert p.feats is not None and len(p.feats) == n and all(f and "\t" not in f for f in p.feats)
    assert any(f != "_" for p in parses for f in p.feats or []), "some word has features"


def test_parse_matches_the_command_line_on_tokenized_text(data: Data, tmp_path: Path) -> None:
    """Tokens in, the same trees and tags as `spoolparse parse` on the same text."""
    text = (data.inputs / "d.txt").read_text()
    cli = data.run("parse", "--model", data.model, "--format", "text", "-", input=text.encode()).stdout.decode()
    parses = spoolparse.Model(data.model).parse([line.split() for line in text.splitlines()])
    words = [[line.split("\t") for line in s.splitlines() if line and not line.startswith("#")] for s in sentences(cli)]
    assert len(words) == len(parses) > 0
    for cols, p in zip(words, parses):
        assert [int(c[6]) for c in cols] == p.heads
        assert [c[7] for c in cols] == p.labels
        assert [c[3] for c in cols] == p.upos
        assert [c[4] for c in cols] == p.xpos
        assert [c[2] for c in cols] == p.lemmas
        assert [c[5] for c in cols] == p.feats
        assert [f"Conf={c:.3f}" for c in p.confidence] == [c[9] for c in cols]


def test_parse_text_matches_the_command_line_on_raw_text(data: Data) -> None:
    """Raw text in: the same CoNLL-U as `spoolparse parse --format raw`, holding the text."""
    model = spoolparse.Model(data.model)
    assert model.has_tokenizer
    text = "The dog barks. It sees cats!\n\nVámonos al mar.  Yes\n"
    cli = data.run("parse", "--model", data.model, "--format", "raw", "-", input=text.encode()).stdout.decode()
    assert model.parse_text(text, name="-") == cli
    out = model.parse_text(text, confidence=False)
    assert out.startswith("# newdoc\n# newpar\n# sent_id = <string>-1\n# text = ")
    # What lies between tokens is kept whatever the tokenizer decides.
    assert "SpacesAfter=\\s\\s" in out and out.rstrip().endswith("SpacesAfter=\\n")
    with pytest.raises(spoolparse.InputError, match="binary data, not raw text"):
        model.parse_text("abc\x00")


def test_parse_text_with_sentences_lines_ends_a_sentence_at_each_line_end_only(data: Data, tmp_path: Path) -> None:
    """`sentences="lines"` is `--raw-sentences lines`: one sentence per line, however it reads."""
    model = spoolparse.Model(data.model)
    text = "show me flights from boston\nThe dog barks. It sees cats!\n"
    cli = data.run(
        "parse", "--model", data.model, "--format", "raw", "--raw-sentences", "lines", "-", input=text.encode()
    ).stdout.decode()
    out = model.parse_text(text, sentences="lines", name="-")
    assert out == cli
    assert [line for line in out.splitlines() if line.startswith("# text = ")] == [
        "# text = show me flights from boston",
        "# text = The dog barks. It sees cats!",
    ]
    with pytest.raises(ValueError, match="model.*lines"):
        model.parse_text(text, sentences="line")
    # parse_file takes it too, for raw text files.
    raw = tmp_path / "lines.raw"
    raw.write_text(text)
    model.parse_file(raw, tmp_path / "lines.conllu", sentences="lines")
    assert (tmp_path / "lines.conllu").read_text() == model.parse_text(text, sentences="lines", name=str(raw))


def test_given_tags_are_used_and_not_predicted(data: Data) -> None:
    model = spoolparse.Model(data.model)
    [p] = model.parse([["The", "dog", "barks", "."]], upos=[["DET", "NOUN", "VERB", "PUNCT"]])
    assert p.upos is None and p.xpos is None
    assert p.heads.count(0) == 1
    # Lemmas and FEATS are predicted from the tags given.
    assert p.lemmas is not None and p.lemmas[1] == "dog" and p.feats is not None


def test_bad_tokens_and_tags_raise_value_errors(data: Data) -> None:
    model = spoolparse.Model(data.model)
    with pytest.raises(ValueError, match="sentence 2: token 1"):
        model.parse([["fine"], ["tab\there"]])
    with pytest.raises(ValueError, match="sentence 1: token 2: empty"):
        model.parse([["a", ""]])
    with pytest.raises(ValueError, match="sentence 1: token 1: contains a NUL byte"):
        model.parse([["a\0b"]])
    with pytest.raises(ValueError, match="sentence 2: no tokens"):
        model.parse([["a"], []])
    with pytest.raises(ValueError, match="1 upos tags for 2 tokens"):
        model.parse([["a", "b"]], upos=[["X"]])
    # The shape is said, and what was given instead: one sentence unwrapped, or a string.
    with pytest.raises(TypeError, match=r"one list of tokens per sentence.*not a list of strings \(one sentence\?"):
        model.parse(["not", "a", "list", "of", "tokens"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="sentences must be a list .* not a string"):
        model.parse("The dog barks .")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="upos must be a list with one list of tags per sentence"):
        model.parse([["a"]], upos=["X"])  # type: ignore[list-item]


def test_parse_conllu_is_the_command_lines_output(data: Data) -> None:
    model = spoolparse.Model(data.model)
    for path in (data.inputs / "a.conllu", data.inputs / "c.conllx"):
        text = path.read_text()
        fmt = "conllx" if path.suffix == ".conllx" else "conllu"
        cli = data.run("parse", "--model", data.model, "--format", fmt, "-", input=text.encode()).stdout.decode()
        # The command line names its standard input "stdin" in the ids it gives sentences.
        assert model.parse_conllu(text, format=fmt, name="stdin") == cli
    text = (data.inputs / "a.conllu").read_text()
    plain = data.run("parse", "--model", data.model, "--no-confidence", "-", input=text.encode()).stdout.decode()
    assert model.parse_conllu(text, confidence=False, name="stdin") == plain


def test_parse_file_is_byte_identical_to_the_command_line(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    for path in data.files:
        cli_acc, cli_low, stderr = data.cli(path, tmp_path / "cli", data.threshold)
        assert cli_low is not None
        acc, low = tmp_path / "py" / cli_acc.name, tmp_path / "py" / cli_low.name
        acc.parent.mkdir(exist_ok=True)
        stats = model.parse_file(path, acc, low, min_confidence=data.threshold)
        assert acc.read_bytes() == cli_acc.read_bytes(), path.name
        assert low.read_bytes() == cli_low.read_bytes(), path.name
        assert f"{stats['lowconf']} of {stats['sentences']} sentences below" in stderr
        assert f"parsed {stats['sentences']} sentences, {stats['words']} words" in stderr
        if path.name == "a.conllu":
            assert 0 < stats["lowconf"] < stats["sentences"], "the threshold must send sentences both ways"
    # No threshold: everything to one output, as `spoolparse parse INPUT --output FILE`.
    a = data.inputs / "a.conllu"
    cli_acc, _, _ = data.cli(a, tmp_path / "cli-all", None)
    model.parse_file(a, tmp_path / "all.conllu")
    assert (tmp_path / "all.conllu").read_bytes() == cli_acc.read_bytes()
    # Several inputs, several threads: one output in input order.
    many = tmp_path / "many.conllu.zst"
    model.parse_file([a, data.inputs / "b.conllu.zst"], many, threads=2)
    cli = data.run("parse", "--model", data.model, a, data.inputs / "b.conllu.zst").stdout
    assert decompress(many) == cli
    with pytest.raises(ValueError, match="threads must be at least 1"):
        model.parse_file(a, tmp_path / "none.conllu", threads=0)
    assert not (tmp_path / "none.conllu").exists()
    assert not [p.name for p in tmp_path.rglob(".*")], "temporary files left behind"


def test_shards_concatenate_to_the_whole_file(data: Data, tmp_path: Path) -> None:
    a = data.inputs / "a.conllu"
    ranges = spoolparse.shard_ranges(a, a.stat().st_size // 7)
    assert ranges is not None and len(ranges) >= 5
    assert ranges[0][0] == 0 and ranges[-1][1] == a.stat().st_size
    assert all(x[1] == y[0] for x, y in zip(ranges, ranges[1:]))
    assert spoolparse.shard_ranges(data.inputs / "b.conllu.zst", 10) is None
    with pytest.raises(ValueError, match="max_bytes must be at least 1"):
        spoolparse.shard_ranges(a, 0)
    model = spoolparse.Model(data.model)
    total = 0
    for k, r in enumerate(ranges):
        total += model.parse_file(
            a, tmp_path / f"acc{k}.conllu", tmp_path / f"low{k}.conllu", data.threshold, byte_range=r
        )["sentences"]
    size = a.stat().st_size
    with pytest.raises(ValueError, match=f"goes past the end of .*a.conllu \\({size} bytes\\)"):
        model.parse_file(a, tmp_path / "past.conllu", byte_range=(size + 10, size + 20))
    assert not (tmp_path / "past.conllu").exists()
    cli_acc, cli_low, _ = data.cli(a, tmp_path / "cli", data.threshold)
    assert b"".join((tmp_path / f"acc{k}.conllu").read_bytes() for k in range(len(ranges))) == cli_acc.read_bytes()
    assert b"".join((tmp_path / f"low{k}.conllu").read_bytes() for k in range(len(ranges))) == cli_low.read_bytes()
    assert total == len(sentences(a.read_text()))


def test_min_precision_takes_the_threshold_the_command_line_takes(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    if not data.from_treebank:
        # Trained without --dev: no calibration text.
        with pytest.raises(ValueError, match="spoolparse calibrate"):
            model.threshold_for(0.9)
        return
    for precision in (0.9, 0.8, 0.7, 0.6, 0.5):
        try:
            threshold = model.threshold_for(precision)
            break
        except ValueError as e:
            assert "no threshold gives a precision of" in str(e)
    else:
        pytest.fail("no precision within reach of the model's calibration text")
    a = data.inputs / "a.conllu"
    cli_acc, cli_low = tmp_path / "cli-acc.conllu", tmp_path / "cli-low.conllu"
    stderr = data.run(
        "parse", "--model", data.model, a, "--output", cli_acc, "--rejected", cli_low, "--min-precision", precision
    ).stderr.decode()
    assert f"a precision of {precision} is sentences of confidence ≥ {threshold:.2f}" in stderr
    acc, low = tmp_path / "acc.conllu", tmp_path / "low.conllu"
    model.parse_file(a, acc, low, min_precision=precision)
    assert acc.read_bytes() == cli_acc.read_bytes() and low.read_bytes() == cli_low.read_bytes()
    with pytest.raises(ValueError, match="min_precision needs lowconf"):
        model.parse_file(a, tmp_path / "x.conllu", min_precision=precision)


def test_existing_outputs_are_never_overwritten_unless_asked(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    a = data.inputs / "a.conllu"
    acc, low = tmp_path / "acc.conllu", tmp_path / "low.conllu"
    low.write_text("keep me\n")
    with pytest.raises(FileExistsError, match="low.conllu"):
        model.parse_file(a, acc, low, data.threshold)
    assert low.read_text() == "keep me\n" and not acc.exists()
    model.parse_file(a, acc, low, data.threshold, overwrite=True)
    assert low.read_text() != "keep me\n" and acc.stat().st_size > 0
    with pytest.raises(ValueError, match="lowconf takes the sentences below min_confidence"):
        model.parse_file(a, tmp_path / "x.conllu", tmp_path / "y.conllu")
    with pytest.raises(ValueError, match="min_confidence needs lowconf"):
        model.parse_file(a, tmp_path / "x.conllu", None, 0.5)


def test_overwriting_refuses_an_output_that_is_not_a_file_before_writing_either(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    acc, low = tmp_path / "acc.conllu", tmp_path / "low"
    acc.write_text("yesterday\n")
    low.mkdir()
    with pytest.raises(ValueError, match="not a regular file"):
        model.parse_file(data.inputs / "a.conllu", acc, low, data.threshold, overwrite=True)
    assert acc.read_text() == "yesterday\n" and low.is_dir()


def test_ctrl_c_stops_parse_file_and_publishes_nothing(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    text = (data.inputs / "a.conllu").read_text()
    words = sum(1 for line in text.splitlines() if re.match(r"\d+\t", line))
    big = tmp_path / "big.conllu"
    # Some seconds of parsing, so that the interrupt comes long before the end.
    big.write_text(text * max(1, 1_000_000 // words))
    acc, low = tmp_path / "acc.conllu", tmp_path / "low.conllu"
    # Python turns SIGINT into KeyboardInterrupt only with its default handler, which it does not
    # install when it starts with SIGINT ignored (a shell's `cmd &` or `nohup cmd`, as some CI
    # runners start the tests): the signal was then dropped, parse_file ran to the end, and
    # this test failed, whatever parse_file does. The handler Ctrl-C meets in a terminal:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, signal.raise_signal, (signal.SIGINT,))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            model.parse_file(big, acc, low, data.threshold)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    # A parse_file that did not stop would have published both outputs before the interrupt
    # was raised after it returned.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.conllu"], "an output or a temporary was left"


def test_an_input_is_never_its_own_output_even_when_overwriting(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    a = tmp_path / "a.conllu"
    a.write_bytes((data.inputs / "a.conllu").read_bytes())
    before = a.read_bytes()
    with pytest.raises(ValueError, match="same file as the input"):
        model.parse_file(a, a, overwrite=True)
    assert a.read_bytes() == before


def test_bad_input_raises_input_error_with_file_and_line(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    good = sentences((data.inputs / "a.conllu").read_text())
    before, after = good[:12], good[12:] * 3
    bad_line = sum(s.count("\n") for s in before) + 2  # the second line of the 13th sentence
    bad = tmp_path / "bad.conllu"
    bad.write_text("".join(before) + "# sent_id = broken\n1\tunparsable\tfour\tcolumns\n\n" + "".join(after))
    out, low = tmp_path / "out.conllu", tmp_path / "low.conllu"
    with pytest.raises(spoolparse.InputError) as e:
        model.parse_file(bad, out, low, data.threshold)
    assert str(e.value).startswith(f"{bad}:{bad_line}: expected 10 tab-separated columns")
    assert (e.value.path, e.value.line) == (str(bad), bad_line)
    assert data.run_fails("parse", "--model", data.model, bad).startswith(f"spoolparse: error: {bad}:{bad_line}:")
    assert not out.exists() and not low.exists() and not list(tmp_path.glob(".*")), "a failed run leaves nothing"
    # In a shard that starts after the bad line's file line 1, the line is still the file's.
    at = bad.read_bytes().index(b"\tunparsable\t")
    ranges = spoolparse.shard_ranges(bad, at // 2)
    assert ranges is not None
    shard = next(r for r in ranges if 0 < r[0] < at < r[1])
    with pytest.raises(spoolparse.InputError, match=f"^{re.escape(str(bad))}:{bad_line}:"):
        model.parse_file(bad, out, byte_range=shard)
    with pytest.raises(spoolparse.InputError, match="^<string>:2: "):
        model.parse_conllu("# c\n1\tonly\n\n")


def test_a_model_pickles_as_its_path(data: Data, tmp_path: Path) -> None:
    model = spoolparse.Model(data.model)
    again = pickle.loads(pickle.dumps(model))
    assert again.fingerprint == model.fingerprint and again.path == model.path
    moved = tmp_path / "moved.model"
    shutil.copy(data.model, moved)
    blob = pickle.dumps(spoolparse.Model(moved))
    moved.unlink()
    with pytest.raises(FileNotFoundError):
        pickle.loads(blob)  # reopened by path, not carried in the pickle


def test_threads_share_a_model_and_parse_without_the_gil(data: Data) -> None:
    model = spoolparse.Model(data.model)
    text = (data.inputs / "a.conllu").read_text()
    expected = model.parse_conllu(text)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: model.parse_conllu(text), range(8)))
    assert all(r == expected for r in results)
    # While another thread parses, this one keeps running: the GIL is released. Held, this
    # thread would stop for the whole parse.
    big = text * max(20, 4_000_000 // len(text))
    done = threading.Event()
    worker = threading.Thread(target=lambda: (model.parse_conllu(big), done.set()))
    started = last = time.perf_counter()
    longest_pause = 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        longest_pause, last = max(longest_pause, now - last), now
    worker.join()
    took = time.perf_counter() - started
    assert took > 0.05, f"parsing took {took:.3f} s: too short to tell"
    assert longest_pause < took / 2, f"this thread stopped for {longest_pause:.3f} s of {took:.3f} s: the GIL was held"


MALFORMED = "# sent_id = broken\n1\tunparsable\tfour\tcolumns\n\n"


def test_malformed_sentences_go_to_lowconf_unparsed_when_asked_as_the_command_line_does(
    data: Data, tmp_path: Path
) -> None:
    """``malformed="lowconf"`` (``--malformed lowconf``): the placeholder with the error and the
    raw lines, in lowconf (in accepted without one), the run goes on, and the count is given;
    the default still raises."""
    model = spoolparse.Model(data.model)
    good = sentences((data.inputs / "a.conllu").read_text())
    bad = tmp_path / "bad.conllu"
    bad.write_text("".join(good[:3]) + MALFORMED + "".join(good[3:6]))
    bad_line = sum(s.count("\n") for s in good[:3]) + 2
    out, low = tmp_path / "out.conllu", tmp_path / "low.conllu"
    stats = model.parse_file(bad, out, low, data.threshold, malformed="lowconf")
    assert stats["malformed"] == 1 and stats["sentences"] == 7 and stats["lowconf"] >= 1
    placeholder = (
        "# sent_id = broken\n# text = _\n"
        f"# spoolparse_error = {bad}:{bad_line}: expected 10 tab-separated columns, found 4\n"
        "# spoolparse_raw = # sent_id = broken\n# spoolparse_raw = 1\\tunparsable\\tfour\\tcolumns\n"
        "1\t_\t_\tX\t_\t_\t0\troot\t_\tSpoolparseUnparsed=Yes\n\n"
    )
    assert placeholder in low.read_text() and "unparsable" not in out.read_text()
    assert len(sentences(out.read_text())) + len(sentences(low.read_text())) == 7
    cli_out, cli_low = tmp_path / "cli-out.conllu", tmp_path / "cli-low.conllu"
    args = ["--model", data.model, bad, "--output", cli_out, "--rejected", cli_low]
    result = data.run("parse", *args, "--min-confidence", data.threshold, "--malformed", "lowconf")
    assert (cli_out.read_bytes(), cli_low.read_bytes()) == (out.read_bytes(), low.read_bytes())
    assert f"1 malformed sentences went to {cli_low} unparsed" in result.stderr.decode()
    # Without a threshold, lowconf holds the malformed sentences only; without lowconf, the
    # placeholder is in accepted, in its place.
    only = tmp_path / "only.conllu"
    model.parse_file(bad, tmp_path / "all.conllu", only, malformed="lowconf")
    assert only.read_text() == placeholder
    stats = model.parse_file(bad, tmp_path / "one.conllu", malformed="lowconf")
    assert stats["malformed"] == 1 and placeholder in (tmp_path / "one.conllu").read_text()
    with pytest.raises(spoolparse.InputError, match=f"^{re.escape(str(bad))}:{bad_line}:"):
        model.parse_file(bad, tmp_path / "strict.conllu")
    with pytest.raises(ValueError, match="malformed must be"):
        model.parse_file(bad, tmp_path / "x.conllu", malformed="skip")


def test_a_file_that_is_no_corpus_fails_even_with_malformed_sentences_passed_on(data: Data, tmp_path: Path) -> None:
    binary = tmp_path / "binary.conllu"
    binary.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(spoolparse.InputError, match=f"^{re.escape(str(binary))}"):
        spoolparse.Model(data.model).parse_file(binary, tmp_path / "out.conllu", malformed="lowconf")
    assert not (tmp_path / "out.conllu").exists()


def test_a_directory_as_input_is_said_to_be_one_with_how_to_name_its_files(data: Data, tmp_path: Path) -> None:
    """It said only "is a directory"; now what to give instead."""
    said = f"{data.inputs}: cannot open: is a directory; name the files in it instead (say {data.inputs}/*.conllu)"
    with pytest.raises(IsADirectoryError, match=re.escape(said)):
        spoolparse.Model(data.model).parse_file(data.inputs, tmp_path / "out.conllu")
    assert data.run_fails("parse", "--model", data.model, data.inputs).strip() == f"spoolparse: error: {said}"


def test_a_pickled_model_opens_its_absolute_path_from_another_working_directory(
    data: Data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative path is resolved when the model is opened: unpickled where the working
    directory is another (a Spark executor), it used to name no file there."""
    monkeypatch.chdir(data.model.parent)
    model = spoolparse.Model(data.model.name)
    assert model.path == data.model
    blob = pickle.dumps(model)
    monkeypatch.chdir(tmp_path)
    assert pickle.loads(blob).fingerprint == model.fingerprint


def test_an_unpickled_model_whose_file_now_holds_another_model_is_refused(data: Data, tmp_path: Path) -> None:
    """The pickle carries the fingerprint: a file replaced by another model used to be opened
    and parsed with, silently."""
    path = tmp_path / "m.model"
    shutil.copy(data.model, path)
    blob = pickle.dumps(spoolparse.Model(path))
    other = tmp_path / "other.model"
    train = [str(data.bin), "train", "--train", str(FIXTURES / "special.conllu"), "--output", str(other)]
    subprocess.run([*train, "--epochs", "1", "--jackknife", "0"], check=True, capture_output=True)
    os.replace(other, path)
    fingerprint = spoolparse.Model(path).fingerprint
    with pytest.raises(spoolparse.ModelError, match=f"^{re.escape(str(path))}: holds model {fingerprint}, not "):
        pickle.loads(blob)
