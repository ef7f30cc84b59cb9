"""Every kind of output passes the official UD validator (``udvalidate --lang en --level 2``,
from the ``udtools`` package that scripts/python-env.sh installs): ``spoolparse parse`` of
CoNLL-U (as given, with the model's whole analysis, and without LEMMA and FEATS, which the
model then predicts), tokenized text and raw text (predicted UPOS, XPOS, FEATS and LEMMA), the daemon's accepted and lowconf outputs (CoNLL-X rewritten as
CoNLL-U, and the placeholder of a malformed sentence included), ``Model.parse_file`` and the
Spark job's shards. What the validator finds in an output but not in its input is ours, and
there must be none; what the input already had (the fixtures' own faults, when the tests run
without en_ewt) is not counted against us."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import spoolparse
from conftest import Data, decompress, raw_text, sentences

# Validator test ids that an input without ids or text has and that our outputs must fix.
FIXED_BY_US = {"missing-sent-id", "missing-text"}


def udvalidate() -> str:
    """The validator beside this Python (the test environment's), else on PATH."""
    found = shutil.which("udvalidate", path=str(Path(sys.executable).parent)) or shutil.which("udvalidate")
    if found is None:
        pytest.fail("udvalidate not found: scripts/python-env.sh installs it (udtools, python/requirements-dev.txt)")
    return found


def incidents(path: Path) -> tuple[Counter[str], str]:
    """The validator's errors (level 2, warnings left out) in the CoNLL-U file ``path`` (or
    ``.zst``), counted by test id, and its report."""
    text = decompress(path)
    result = subprocess.run(
        [udvalidate(), "--lang", "en", "--level", "2", "--no-warnings", "--max-err", "0", "-"],
        input=text,
        capture_output=True,
    )
    report = result.stdout.decode() + result.stderr.decode()
    found = Counter(re.findall(r"\[L\d \w+ ([\w-]+)\]", report))
    assert (result.returncode == 0) == (not found), f"{path}: exit status {result.returncode}:\n{report}"
    return found, report


def assert_ours_valid(output: Path, source: Path | None) -> None:
    """``output`` has no validator error that ``source`` (the CoNLL-U it was parsed from, if
    any) has not, and none of the kinds we fix."""
    found, report = incidents(output)
    before = incidents(source)[0] if source is not None else Counter()
    ours = found - Counter({k: v for k, v in before.items() if k not in FIXED_BY_US})
    assert not ours, f"{output}: errors the input did not have: {dict(ours)}\n{report}"


def as_conllx(conllu: str) -> str:
    """The words of CoNLL-U sentences as CoNLL-X: no comments, multiword tokens or empty nodes,
    DEPS and MISC as PHEAD and PDEPREL `_`."""
    out = []
    for sent in sentences(conllu):
        rows = [line.split("\t") for line in sent.splitlines() if line and line.split("\t")[0].isdigit()]
        out.append("".join("\t".join(r[:8] + ["_", "_"]) + "\n" for r in rows) + "\n")
    return "".join(out)


@pytest.fixture(scope="module")
def inputs(data: Data, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """CoNLL-U, its CoNLL-X copy and tokenized text, from the data's inputs; and the CoNLL-U
    source of each (for the errors an input brings)."""
    root = tmp_path_factory.mktemp("validated")
    conllu = root / "b.conllu"
    conllu.write_bytes(decompress(data.inputs / "b.conllu.zst"))
    conllx = root / "b.conllx"
    conllx.write_text(as_conllx(conllu.read_text()))
    return {"conllu": conllu, "conllx": conllx, "text": data.inputs / "d.txt"}


def test_parse_outputs_pass_the_validator(data: Data, inputs: dict[str, Path], tmp_path: Path) -> None:
    for kind in ["conllu", "text"]:
        accepted, lowconf, _ = data.cli(inputs[kind], tmp_path / kind, data.threshold)
        assert lowconf is not None
        source = inputs["conllu"] if kind == "conllu" else None
        for output in [accepted, lowconf]:
            assert_ours_valid(output, source)
    # Raw text (the text of the CoNLL-U's sentences, a paragraph each), and the CoNLL-U with the
    # model's whole analysis (--retag=always), and without LEMMA and FEATS (predicted).
    raw = tmp_path / "b.raw"
    texts = [line[len("# text = ") :] for line in inputs["conllu"].read_text().splitlines() if line.startswith("# text = ")]
    raw.write_text("\n\n".join(texts) + "\n")
    bare = tmp_path / "bare.conllu"
    bare.write_text(
        "".join(
            "\t".join(c[:2] + ["_"] + c[3:5] + ["_"] + c[6:]) + "\n" if len(c) == 10 and c[0].isdigit() else "\t".join(c) + "\n"
            for c in (line.split("\t") for line in inputs["conllu"].read_text().splitlines())
        )
    )
    for name, input, extra in [("raw", raw, []), ("retag", inputs["conllu"], ["--retag"]), ("bare", bare, [])]:
        accepted, lowconf, stderr = data.cli(input, tmp_path / name, data.threshold, *extra)
        assert lowconf is not None
        for output in [accepted, lowconf]:
            assert_ours_valid(output, None if name == "raw" else inputs["conllu"])
        if name == "bare":
            assert "FEATS and LEMMA `_` in all of the first" in stderr, stderr
            words = [line.split("\t") for line in decompress(accepted).decode().splitlines() if line[:1].isdigit()]
            assert all(w[2] != "_" for w in words if w[0].isdigit()), "every word lemmatized"
    # Raw text as it was written: sentences of a paragraph run on, joined as their last token's
    # SpaceAfter says, paragraphs at `# newpar`/`# newdoc`; split by confidence, a sentence that
    # its successor followed without a space can come to stand before a new paragraph in one
    # output, and two files joined in one output (the first not ending in a line feed) put a
    # `# newdoc` after such a sentence: neither may keep its SpaceAfter=No there.
    running = tmp_path / "running.raw"
    running.write_text(raw_text(inputs["conllu"].read_text()).rstrip("\n"))
    accepted, lowconf, _ = data.cli(running, tmp_path / "running", data.threshold)
    assert lowconf is not None
    for output in [accepted, lowconf]:
        assert_ours_valid(output, None)
    joined = tmp_path / "joined.conllu"
    spoolparse.Model(data.model).parse_file([running, raw], joined)
    assert_ours_valid(joined, None)
    # Model.parse_file of two files into one output: ids unique across them. (Of one kind: the
    # validator wants enhanced dependencies in all sentences of a file or in none.)
    other = tmp_path / "e.txt"
    shutil.copy(inputs["text"], other)
    both = tmp_path / "both.conllu"
    spoolparse.Model(data.model).parse_file([inputs["text"], other], both)
    assert_ours_valid(both, None)


def test_the_daemons_outputs_pass_the_validator(data: Data, inputs: dict[str, Path], tmp_path: Path) -> None:
    spool, out = tmp_path / "spool", tmp_path / "out"
    config = tmp_path / "spoolparse.toml"
    config.write_text(
        f'[paths]\nspool = "{spool}"\noutput = "{out}"\nmodel = "{data.model}"\n'
        f"[parse]\nthreads = 1\nmin_confidence = {data.threshold}\n[watch]\nrescan_seconds = 0.2\n"
    )
    # Two malformed sentences (a line of three columns), one with a sent_id of its own.
    good = sentences(inputs["conllu"].read_text())
    bad = ["# sent_id = keep-me\n# text = a b\n1\ta\t_\n\n", "1\tb\t_\n\n"]
    malformed = tmp_path / "m.conllu"
    malformed.write_text(good[0] + bad[0] + "".join(good[1:20]) + bad[1] + "".join(good[20:40]))
    incoming = spool / "incoming"
    incoming.mkdir(parents=True)
    names = {"m.conllu": malformed, "b.conllx": inputs["conllx"], "d.txt": inputs["text"]}
    for name, path in names.items():
        shutil.copy(path, incoming / f".{name}")
        (incoming / f".{name}").rename(incoming / name)
    log = tmp_path / "daemon.log"
    with open(log, "wb") as err:
        daemon = subprocess.Popen([str(data.bin), "daemon", "--config", str(config)], stderr=err)
        try:
            deadline = time.monotonic() + 300
            while len([p for p in (spool / "done").glob("*")]) < len(names):
                assert daemon.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"not done in time:\n{log.read_text()}"
                time.sleep(0.1)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
    lowconf = decompress(out / "lowconf" / "m.conllu.zst").decode()
    # The placeholders: the input's own id as a real comment, else the one of its place.
    assert "# sent_id = keep-me\n# text = _\n# spoolparse_error" in lowconf, lowconf
    assert "# sent_id = m.conllu-22\n# text = _\n# spoolparse_error" in lowconf, lowconf
    sources = {"m.conllu": malformed, "b.conllx": inputs["conllu"], "d.txt": None}
    for name, source in sources.items():
        base = name.removesuffix(".conllu")
        for part in ["accepted", "lowconf"]:
            assert_ours_valid(out / part / f"{base}.conllu.zst", source)


def test_the_spark_jobs_shards_pass_the_validator(data: Data, inputs: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/python-test.sh installs it)")
    import spoolparse.spark as job
    from pyspark.sql import SparkSession

    # The workers run this Python, where the package is installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    try:
        source = tmp_path / "in"
        source.mkdir()
        shutil.copy(inputs["conllu"], source)
        shutil.copy(inputs["text"], source)
        out = tmp_path / "out"
        shard_mb = inputs["conllu"].stat().st_size / 4 / (1 << 20)
        manifest: dict[str, Any] = job.run(
            spark.sparkContext, model=str(data.model), inputs=[str(source)], output=str(out),
            min_confidence=data.threshold, shard_mb=shard_mb,
        )  # fmt: skip
    finally:
        spark.stop()
    for entry in manifest["inputs"]:
        conllu = entry["path"].endswith(".conllu")
        assert not conllu or len(entry["shards"]) >= 3, entry
        for part in ["accepted", "lowconf"]:
            # The shards of a file, together: their ids are the whole file's, unique.
            whole = tmp_path / f"{Path(entry['path']).name}.{part}.conllu"
            whole.write_bytes(b"".join(decompress(out / s[part]) for s in entry["shards"]))
            assert_ours_valid(whole, inputs["conllu"] if conllu else None)


def test_a_neural_models_outputs_pass_the_validator(data: Data, inputs: dict[str, Path], tmp_path: Path) -> None:
    """The accurate tier (``train --neural``) writes through the same pipeline: its parses of
    CoNLL-U, tokenized text and raw text pass as the linear model's do."""
    model = tmp_path / "neural.model"
    argv = [str(data.bin), "train", "--train", str(data.root / "train.conllu"), "--output", str(model), "--neural"]
    argv += ["--neural-size", "small", "--neural-epochs", "2", "--tagger", "--jackknife", "0", "--tagger-epochs", "2"]
    argv += ["--tokenizer", "--tokenizer-epochs", "2"]
    trained = subprocess.run(argv, capture_output=True)
    assert trained.returncode == 0, trained.stderr.decode()
    raw = tmp_path / "b.raw"
    texts = [line[len("# text = ") :] for line in inputs["conllu"].read_text().splitlines() if line.startswith("# text = ")]
    raw.write_text("\n\n".join(texts) + "\n")
    for name, input in [("conllu", inputs["conllu"]), ("text", inputs["text"]), ("raw", raw)]:
        output = tmp_path / f"{name}.conllu"
        parsed = subprocess.run(
            [str(data.bin), "parse", "--model", str(model), str(input), "--output", str(output)], capture_output=True
        )
        assert parsed.returncode == 0, parsed.stderr.decode()
        assert_ours_valid(output, inputs["conllu"] if name == "conllu" else None)
