"""The Spark job on a real Spark in local mode, against the `spoolparse` command line: the same
bytes, each sentence exactly once, also when a task fails and is retried."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest
import spoolparse
from conftest import FIXTURES, Data, decompress

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/python-test.sh installs it)")

import spoolparse.spark as job  # noqa: E402


@pytest.fixture(scope="module")
def sc() -> Iterator[Any]:
    """A local Spark with 2 task slots, where a failed task is tried once more (local[2,2]: two
    attempts) before the job fails."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2,2]")
        .appName("spoolparse-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    yield spark.sparkContext
    spark.stop()


def expected(
    data: Data,
    tmp: Path,
    threshold: float | None,
    files: list[Path] | None = None,
    *extra: object,
    model: Path | None = None,
) -> dict[str, tuple[bytes, bytes | None, str]]:
    """What `spoolparse parse [EXTRA...]` writes for each input (``files``, else the data's) with
    ``model`` (default: the test model): accepted and lowconf text, and stderr."""
    out = {}
    for path in data.files if files is None else files:
        acc, low, stderr = data.cli(path, tmp / "cli", threshold, *extra, model=model)
        out[path.name] = (decompress(acc), decompress(low) if low else None, stderr)
    return out


def check_against_cli(output: Path, manifest: dict[str, Any], cli: dict[str, tuple[bytes, bytes | None, str]]) -> None:
    """Each input's parts, concatenated in the manifest's order, are the CLI's outputs byte for
    byte; the manifest's counts are the CLI's; nothing else is in the output directory."""
    assert json.loads((output / job.MANIFEST).read_text()) == manifest
    listed = {job.MANIFEST}
    assert [Path(e["path"]).name for e in manifest["inputs"]] == sorted(cli)
    for entry in manifest["inputs"]:
        acc, low, stderr = cli[Path(entry["path"]).name]
        parts = entry["shards"]
        assert b"".join(decompress(output / p["accepted"]) for p in parts) == acc, entry["path"]
        listed.update(p["accepted"] for p in parts)
        if low is not None:
            assert b"".join(decompress(output / p["lowconf"]) for p in parts) == low, entry["path"]
            assert f"{entry['lowconf_sentences']} of {entry['sentences']} sentences below" in stderr
        elif any(p["lowconf"] for p in parts):
            # Without a threshold, lowconf/ holds the malformed sentences only: none here.
            assert all(decompress(output / p["lowconf"]) == b"" for p in parts), entry["path"]
        listed.update(p["lowconf"] for p in parts if p["lowconf"])
        assert f"parsed {entry['sentences']} sentences, {entry['words']} words" in stderr
    found = {str(p.relative_to(output)) for p in output.rglob("*") if p.is_file() and p.parent.name != job.TASKS}
    assert found == listed, "files in the output directory that the manifest does not list"
    assert not [p for p in output.rglob(".*")], "temporary files left behind"


def test_the_job_gives_the_command_lines_bytes_once_per_sentence(data: Data, sc: Any, tmp_path: Path) -> None:
    cli = expected(data, tmp_path, data.threshold)
    out = tmp_path / "out"
    # Shards of a few kB: a.conllu (plain) is split; b.conllu.zst cannot be, and is one task.
    manifest = job.run(
        sc, model=str(data.model), inputs=[str(data.inputs)], output=str(out),
        min_confidence=data.threshold, shard_mb=(data.inputs / "a.conllu").stat().st_size / 6 / (1 << 20),
    )  # fmt: skip
    by_name = {Path(e["path"]).name: e for e in manifest["inputs"]}
    assert len(by_name["a.conllu"]["shards"]) >= 4
    assert len(by_name["b.conllu.zst"]["shards"]) == 1
    assert manifest["retried_shards"] == 0
    assert 0 < manifest["lowconf_sentences"] < manifest["sentences"]
    check_against_cli(out, manifest, cli)
    # One model per executor process, whatever the number of tasks it ran.
    records = [json.loads(p.read_text()) for p in (out / job.TASKS).iterdir()]
    assert len(records) == manifest["shards"]
    opened_by = defaultdict(set)
    for r in records:
        opened_by[r["pid"]].add(r["models_opened_by_process"])
    assert all(opened == {1} for opened in opened_by.values()), dict(opened_by)
    assert len(opened_by) < len(records), "every task ran in its own process"


def test_a_neural_model_gives_the_command_lines_bytes_once_per_sentence(
    data: Data, neural: Path, sc: Any, tmp_path: Path
) -> None:
    """The job with a model of `train --neural`, split into shards as the linear one: the CLI's
    bytes with that model, and both tiers' outputs in the same files differ (it did parse with
    the neural model)."""
    threshold = data.threshold_of(neural)
    cli = expected(data, tmp_path, threshold, model=neural)
    out = tmp_path / "out"
    manifest = job.run(
        sc, model=str(neural), inputs=[str(data.inputs)], output=str(out),
        min_confidence=threshold, shard_mb=(data.inputs / "a.conllu").stat().st_size / 6 / (1 << 20),
    )  # fmt: skip
    assert len({Path(e["path"]).name: e for e in manifest["inputs"]}["a.conllu"]["shards"]) >= 4
    assert 0 < manifest["lowconf_sentences"] < manifest["sentences"]
    check_against_cli(out, manifest, cli)
    linear = expected(data, tmp_path / "linear", threshold)
    assert linear["a.conllu"][:2] != cli["a.conllu"][:2]


def test_a_raw_text_file_is_one_task_with_the_command_lines_bytes(data: Data, sc: Any, tmp_path: Path) -> None:
    """Raw text is never split (its sentences are known only once the text before them is
    tokenized): a file far above the shard size is one task, and its output is the CLI's."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    raw = inputs / "notes.raw"
    raw.write_text("The dog barks. It sees cats!\n\nVámonos al mar.  Yes\n" * 200, encoding="utf-8")
    cli = expected(data, tmp_path, data.threshold, [raw])
    out = tmp_path / "out"
    manifest = job.run(
        sc, model=str(data.model), inputs=[str(inputs)], output=str(out),
        min_confidence=data.threshold, shard_mb=raw.stat().st_size / 8 / (1 << 20),
    )  # fmt: skip
    assert [len(e["shards"]) for e in manifest["inputs"]] == [1]
    assert manifest["sentences"] >= 400, "a paragraph is at least a sentence"
    check_against_cli(out, manifest, cli)
    # One sentence per line, as `--raw-sentences lines`: 400 lines, 400 sentences.
    cli = expected(data, tmp_path / "lines", data.threshold, [raw], "--raw-sentences", "lines")
    out = tmp_path / "out-lines"
    manifest = job.run(
        sc, model=str(data.model), inputs=[str(inputs)], output=str(out),
        min_confidence=data.threshold, raw_sentences="lines",
    )  # fmt: skip
    assert manifest["sentences"] == 400 and manifest["raw_sentences"] == "lines"
    check_against_cli(out, manifest, cli)


def test_a_task_that_fails_is_retried_and_every_sentence_is_there_once(
    data: Data, sc: Any, tmp_path: Path
) -> None:
    cli = expected(data, tmp_path, data.threshold)
    out = tmp_path / "out"
    shard_mb = (data.inputs / "a.conllu").stat().st_size / 4 / (1 << 20)
    shards = job.plan(job._expand([str(data.inputs)]), shard_bytes=int(shard_mb * (1 << 20)), split=True)
    # The first attempt of these fails after renaming its outputs into place, before its record.
    failing = [shards[1]["id"], shards[-1]["id"]]
    manifest = job.run(
        sc, model=str(data.model), inputs=[str(data.inputs)], output=str(out),
        min_confidence=data.threshold, shard_mb=shard_mb, fail_first_attempt=failing,
    )  # fmt: skip
    assert manifest["retried_shards"] == len(failing)
    attempts = {s["accepted"]: s["attempt"] for e in manifest["inputs"] for s in e["shards"]}
    assert sorted(attempts[shards[i]["accepted"]] for i in failing) == [1, 1]
    check_against_cli(out, manifest, cli)


def test_without_a_threshold_everything_is_accepted(data: Data, sc: Any, tmp_path: Path) -> None:
    cli = expected(data, tmp_path, None)
    out = tmp_path / "out"
    manifest = job.run(sc, model=str(data.model), inputs=[str(data.inputs / "*")], output=str(out))
    assert manifest["lowconf_sentences"] == 0 and manifest["malformed_sentences"] == 0
    check_against_cli(out, manifest, cli)
    strict = tmp_path / "strict"
    manifest = job.run(sc, model=str(data.model), inputs=[str(data.inputs / "*")], output=str(strict), malformed="fail")
    assert not (strict / "lowconf").exists()
    check_against_cli(strict, manifest, cli)


BAD_INPUT = "1\tgood\t_\t_\t_\t_\t_\t_\t_\t_\n\n# sent_id = broken\n1\tbroken\n\n"


def test_bad_input_fails_a_strict_job_naming_file_and_line(data: Data, sc: Any, tmp_path: Path) -> None:
    """With ``malformed="fail"``: the task's own error, not Spark's trace; and the job takes back what it created (the
    good file's outputs, published before the bad one failed, too): the directory used to stay
    without a manifest, and a rerun refused it."""
    bad = tmp_path / "in" / "bad.conllu"
    bad.parent.mkdir()
    bad.write_text(BAD_INPUT)
    shutil.copy(data.inputs / "a.conllu", bad.parent / "a.conllu")
    out = tmp_path / "new" / "out"
    with pytest.raises(job.TaskError) as failed:
        job.run(
            sc, model=str(data.model), inputs=[str(bad.parent)], output=str(out), min_confidence=0.5,
            shard_mb=(bad.parent / "a.conllu").stat().st_size / 3 / (1 << 20), malformed="fail",
        )  # fmt: skip
    assert str(failed.value) == f"{bad}:4: expected 10 tab-separated columns, found 2"
    assert failed.value.kind == "spoolparse.InputError"
    assert not out.exists() and out.parent.is_dir()
    # The same output directory, the bad file left out.
    manifest = job.run(sc, model=str(data.model), inputs=[str(bad.parent / "a.conllu")], output=str(out))
    assert manifest["sentences"] > 0 and (out / job.MANIFEST).is_file()


def test_a_failed_job_leaves_the_empty_output_directory_it_was_given(data: Data, sc: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.conllu"
    bad.write_text(BAD_INPUT)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(job.TaskError, match=re.escape(f"{bad}:4:")):
        job.run(sc, model=str(data.model), inputs=[str(bad)], output=str(out), min_confidence=0.5, malformed="fail")
    assert out.is_dir() and not list(out.iterdir())


def test_a_failed_job_removes_only_what_it_wrote(data: Data, tmp_path: Path) -> None:
    """Without Spark: the shards' outputs, records and temporaries go; a file that the job did
    not write stays, and so do the directories that hold one."""
    out = tmp_path / "out"
    a = data.inputs / "a.conllu"
    shards = job.plan([str(a)], shard_bytes=a.stat().st_size // 2, split=True)
    created = job._make_directories(str(out), ("accepted", "lowconf", job.TASKS))
    assert created == [str(out), str(out / "accepted"), str(out / "lowconf"), str(out / job.TASKS)]
    for s in shards:
        (out / s["accepted"]).write_text("parsed")
        (out / s["lowconf"]).write_text("parsed")
        (out / job.TASKS / f"shard-{s['id']:05d}.json").write_text("{}")
    (out / "accepted" / ".a.part-00000.conllu.tmp123-4").write_text("half")
    (out / job.TASKS / ".shard-00001.json.tmp123-4").write_text("half")
    (out / "lowconf" / "notes.txt").write_text("the user's")
    kept = job._unpublish(str(out), created, shards)
    assert kept == [str(out / "lowconf"), str(out)]
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert left == ["lowconf", "lowconf/notes.txt"]
    # An attempt that Spark had not killed yet cannot put anything back: tasks never make the
    # directories they write in.
    model = {"shared": True, "path": str(data.model), "name": data.model.name, "verify": True}
    model["fingerprint"] = spoolparse.Model(data.model).fingerprint
    spec = {"model": model, "output": str(out), "min_confidence": data.threshold, "threads": 1}
    with pytest.raises(OSError):
        job.run_shard(shards[0], spec)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == left


def test_a_task_error_is_read_from_sparks_exception() -> None:
    """pyspark 4 raises the task's traceback; pyspark 3's Py4JJavaError wraps it in Java."""
    frames = "Traceback (most recent call last):\n"
    frames += '  File "spark.py", line 1, in run_shard\n    stats = model.parse_file(\n'
    line = "spoolparse.InputError: /in/bad.conllu:4: expected 10 tab-separated columns, found 2"
    for text in (
        f"An exception was thrown from the Python worker:\n{frames}{line}",
        f"An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: Job aborted: "
        f"org.apache.spark.api.python.PythonException: {frames}{line}\n\n\tat org.apache.spark.Foo(Foo.scala:1)\n",
    ):
        error = job._task_error(Exception(text))
        assert error is not None and error.kind == "spoolparse.InputError"
        assert str(error) == "/in/bad.conllu:4: expected 10 tab-separated columns, found 2"
    other = job._task_error(Exception(f"{frames}ZeroDivisionError: division by zero"))
    assert other is not None and str(other) == "ZeroDivisionError: division by zero"
    assert job._task_error(Exception("Job aborted: executor lost")) is None


def test_a_file_named_like_a_shard_of_another_keeps_its_own_output(data: Data, sc: Any, tmp_path: Path) -> None:
    """a.part-00001.conllu beside a.conllu split in shards: both used to write
    accepted/a.part-00001.conllu, the later rename replaced the other's sentences, and the job
    reported success. Each now has its own outputs, and each input's are the CLI's."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(data.inputs / "a.conllu", inputs / "a.conllu")
    shutil.copy(FIXTURES / "special.conllu", inputs / "a.part-00001.conllu")
    cli = expected(data, tmp_path, data.threshold, sorted(inputs.iterdir()))
    out = tmp_path / "out"
    manifest = job.run(
        sc, model=str(data.model), inputs=[str(inputs)], output=str(out), min_confidence=data.threshold,
        shard_mb=(inputs / "a.conllu").stat().st_size / 3 / (1 << 20),
    )  # fmt: skip
    whole, lone = manifest["inputs"]
    assert len(whole["shards"]) >= 2 and whole["shards"][1]["accepted"] == "accepted/a.part-00001.conllu"
    assert [s["accepted"] for s in lone["shards"]] == ["accepted/a.part-00001~2.conllu"]
    assert [s["lowconf"] for s in lone["shards"]] == ["lowconf/a.part-00001~2.conllu"]
    check_against_cli(out, manifest, cli)


def test_no_two_shards_are_planned_the_same_output(data: Data, tmp_path: Path) -> None:
    """Whatever the inputs' names and order, every output name (whole files and shards) is
    planned once: the later input gets ~2, ~3, ..., skipping names that are taken."""
    a, small = data.inputs / "a.conllu", FIXTURES / "special.conllu"
    files = []
    # A small file named like a shard of a.conllu, two a.conllu to split (in two folders), and a
    # small a~2.conllu: a name that the parts of the first a~2 leave free.
    names = ["a.part-00001.conllu", "x/a.conllu", "y/a.conllu", "a~2.conllu"]
    for name, source in zip(names, (small, a, a, small)):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(source, tmp_path / name)
        files.append(str(tmp_path / name))
    shards = job.plan(files, shard_bytes=a.stat().st_size // 3, split=True)
    by_input = defaultdict(list)
    for s in shards:
        by_input[s["input"]].append(s["accepted"])
    assert by_input[0] == ["accepted/a.part-00001.conllu"]
    assert len(by_input[1]) >= 2 and by_input[1][1] == "accepted/a~2.part-00001.conllu"
    assert by_input[2][1] == "accepted/a~3.part-00001.conllu"
    assert by_input[3] == ["accepted/a~2.conllu"]
    names = [s[kind] for s in shards for kind in ("accepted", "lowconf")]
    assert len(set(names)) == len(names), names


def test_an_existing_output_directory_is_refused(data: Data, sc: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious").write_text("keep")
    with pytest.raises(FileExistsError):
        job.run(sc, model=str(data.model), inputs=[str(data.inputs)], output=str(out))
    assert [p.name for p in out.iterdir()] == ["precious"]


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"min_confidence": float("nan")}, "the minimum confidence must be within 0..1 (got nan)"),
        ({"min_confidence": 1.5}, "the minimum confidence must be within 0..1 (got 1.5)"),
        ({"min_confidence": -0.1}, "the minimum confidence must be within 0..1 (got -0.1)"),
        ({"shard_mb": -1.0}, "the shard size must be 0 (never split) or a number of MiB (got -1.0)"),
        ({"shard_mb": float("inf")}, "the shard size must be 0 (never split) or a number of MiB (got inf)"),
        ({"compression": "gzip"}, "compression must be one of input, zstd, none (got 'gzip')"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_created(
    data: Data, sc: Any, tmp_path: Path, bad: dict[str, Any], message: str
) -> None:
    """A threshold outside 0..1 failed every task, buried in Spark's trace, and left an output
    directory without a manifest that a rerun refused; the driver now refuses it first."""
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=re.escape(message)):
        job.run(sc, model=str(data.model), inputs=[str(data.inputs / "c.conllx")], output=str(out), **bad)
    assert not out.exists()


def test_the_command_line_refuses_bad_arguments_in_one_line(data: Data, tmp_path: Path) -> None:
    """Before Spark starts: argparse's error, status 2, and no output directory."""
    out = tmp_path / "out"
    common = ["--model", str(data.model), "--input", str(data.inputs / "c.conllx"), "--output", str(out)]
    for option, value, message in [
        ("--min-confidence", "nan", "the minimum confidence must be within 0..1 (got nan)"),
        ("--min-confidence", "1.5", "the minimum confidence must be within 0..1 (got 1.5)"),
        ("--min-confidence", "-0.1", "the minimum confidence must be within 0..1 (got -0.1)"),
        ("--min-confidence", "high", "not a number: 'high'"),
        ("--shard-mb", "-1", "the shard size must be 0 (never split) or a number of MiB (got -1.0)"),
    ]:
        argv = [sys.executable, "-m", "spoolparse.spark", "--master", "local[1]", *common, f"{option}={value}"]
        result = subprocess.run(argv, capture_output=True, timeout=300)
        last = result.stderr.decode().strip().splitlines()[-1]
        assert (result.returncode, last) == (2, f"python -m spoolparse.spark: error: argument {option}: {message}")
        assert not out.exists()


def test_the_command_line_refuses_a_missing_input_or_model_or_a_used_output_before_spark_starts(
    data: Data, tmp_path: Path
) -> None:
    """Status 1 and one line, the only one: Spark is not started (its start took seconds and
    printed its log before the error)."""
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    good = str(data.inputs / "c.conllx")
    missing = "none-*.conllu: no such file, and no file matches it"
    for model, inputs, output, message in [
        (data.model, str(tmp_path / "none-*.conllu"), tmp_path / "o1", missing),
        (tmp_path / "no.model", good, tmp_path / "o2", "no.model: No such file or directory"),
        (data.model, good, used, "exists and is not an empty directory: outputs are never overwritten"),
    ]:
        argv = [sys.executable, "-m", "spoolparse.spark", "--master", "local[1]", "--model", str(model)]
        result = subprocess.run([*argv, "--input", inputs, "--output", str(output)], capture_output=True, timeout=300)
        lines = result.stderr.decode().strip().splitlines()
        assert result.returncode == 1 and len(lines) == 1, lines
        assert lines[0].startswith("spoolparse.spark: error: ") and message in lines[0], lines
        assert output == used or not output.exists()


def test_the_command_line_ends_with_the_tasks_error(data: Data, tmp_path: Path) -> None:
    """A bad input with ``--malformed fail``: status 1, the last line is the task's
    `FILE:LINE: problem` (the line that `spoolparse parse` prints), not Spark's trace, and no
    output directory is left."""
    bad = tmp_path / "bad.conllu"
    bad.write_text(BAD_INPUT)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spoolparse.spark", "--master", "local[1]", "--model", str(data.model)]
    argv += ["--input", str(bad), "--output", str(out), "--min-confidence", "0.5", "--malformed", "fail"]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    result = subprocess.run(argv, capture_output=True, env=env, timeout=300)
    last = result.stderr.decode().strip().splitlines()[-1]
    problem = f"{bad}:4: expected 10 tab-separated columns, found 2"
    assert (result.returncode, last) == (1, f"spoolparse.spark: error: {problem}")
    assert data.run_fails("parse", "--model", data.model, bad).strip() == f"spoolparse: error: {problem}"
    assert not out.exists()


PLACEHOLDER = "1\t_\t_\tX\t_\t_\t0\troot\t_\tSpoolparseUnparsed=Yes\n\n"


def three_inputs(data: Data, folder: Path) -> Path:
    """Two good inputs and one (bad.conllu) with a malformed sentence on line 4 between two good
    ones; the folder."""
    folder.mkdir()
    shutil.copy(data.inputs / "a.conllu", folder / "a.conllu")
    shutil.copy(data.inputs / "c.conllx", folder / "c.conllx")
    (folder / "bad.conllu").write_text(BAD_INPUT + "1\tgood\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    return folder


def test_a_malformed_sentence_goes_to_lowconf_unparsed_and_the_job_goes_on(
    data: Data, sc: Any, tmp_path: Path
) -> None:
    """By default: one malformed sentence used to fail the whole job and take back every
    output, the good files' too. Now it is in lowconf/ as the daemon writes it, counted in the
    manifest, and every other sentence is where it was."""
    inputs = three_inputs(data, tmp_path / "in")
    cli = expected(data, tmp_path, data.threshold, [inputs / "a.conllu", inputs / "c.conllx"])
    out = tmp_path / "out"
    manifest = job.run(sc, model=str(data.model), inputs=[str(inputs)], output=str(out), min_confidence=data.threshold)
    by_name = {Path(e["path"]).name: e for e in manifest["inputs"]}
    bad = by_name["bad.conllu"]
    assert (bad["sentences"], bad["malformed_sentences"], bad["errors"]) == (3, 1, [])
    assert (manifest["malformed_sentences"], manifest["failed_inputs"], manifest["malformed"]) == (1, 0, "lowconf")
    assert by_name["a.conllu"]["malformed_sentences"] == 0
    low = (out / bad["shards"][0]["lowconf"]).read_text()
    assert low.count("SpoolparseUnparsed=Yes") == 1 and low.count("\n\n") == bad["lowconf_sentences"]
    placeholder = f"# spoolparse_error = {inputs / 'bad.conllu'}:4: expected 10 tab-separated columns, found 2\n"
    placeholder += "# spoolparse_raw = # sent_id = broken\n# spoolparse_raw = 1\\tbroken\n" + PLACEHOLDER
    assert placeholder in low
    accepted = (out / bad["shards"][0]["accepted"]).read_text()
    assert "broken" not in accepted and accepted.count("\n\n") == bad["accepted_sentences"]
    # The good inputs: the command line's bytes.
    del by_name["bad.conllu"]
    manifest["inputs"] = list(by_name.values())
    (out / job.MANIFEST).write_text(json.dumps(manifest))
    for name in ("accepted", "lowconf"):
        (out / bad["shards"][0][name]).unlink()
    check_against_cli(out, manifest, cli)


def test_a_file_that_cannot_be_read_is_in_the_manifest_and_the_others_are_published(
    data: Data, tmp_path: Path
) -> None:
    """The command line over three inputs, one malformed sentence in one and a file that is no
    corpus beside them: status 2 (complete, an input missing), a warning line naming the file,
    the manifest says which; every other sentence is published."""
    inputs = three_inputs(data, tmp_path / "in")
    binary = inputs / "zz-binary.conllu"
    binary.write_bytes(bytes(range(256)) * 64)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spoolparse.spark", "--master", "local[1]", "--model", str(data.model)]
    argv += ["--input", str(inputs), "--output", str(out), "--min-confidence", str(data.threshold)]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    result = subprocess.run(argv, capture_output=True, env=env, timeout=300)
    lines = result.stderr.decode().strip().splitlines()
    manifest = json.loads((out / job.MANIFEST).read_text())
    assert result.returncode == 2, lines[-5:]
    (unread,) = [e for e in manifest["inputs"] if e["errors"]]
    assert unread["path"] == str(binary) and unread["errors"][0].startswith(f"{binary}")
    assert unread["shards"][0]["accepted"] is None and unread["sentences"] == 0
    assert f"spoolparse.spark: warning: {unread['errors'][0]}: nothing of it was published" in lines
    assert (manifest["failed_inputs"], manifest["malformed_sentences"], manifest["files"]) == (1, 1, 4)
    assert "1 malformed in lowconf/ unparsed" in lines[-1] and "1 files could not be read" in lines[-1]
    assert not list((out / "accepted").glob("zz-binary*")) and not list((out / "lowconf").glob("zz-binary*"))
    assert sum(e["sentences"] for e in manifest["inputs"]) == manifest["sentences"] > 3


def run_command(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    return result


def test_the_command_line_and_spark_submit_run_the_job(data: Data, tmp_path: Path) -> None:
    """`python -m spoolparse.spark`, and the module's file given to spark-submit, as a user
    runs them (each its own Spark)."""
    cli = expected(data, tmp_path, data.threshold)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    common = ["--model", str(data.model), "--input", str(data.inputs / "*"), "--min-confidence", str(data.threshold)]
    out = tmp_path / "module"
    result = run_command(
        [sys.executable, "-m", "spoolparse.spark", "--master", "local[2]", *common, "--output", str(out)], env
    )
    manifest = json.loads((out / job.MANIFEST).read_text())
    assert f"{manifest['sentences']} sentences" in result.stderr.decode()
    check_against_cli(out, manifest, cli)
    submit = shutil.which("spark-submit", path=str(Path(sys.executable).parent)) or shutil.which("spark-submit")
    if submit is None:
        pytest.skip("spark-submit not found beside this Python")
    out = tmp_path / "submit"
    run_command([submit, "--master", "local[2]", job.__file__, *common, "--output", str(out)], env)
    check_against_cli(out, json.loads((out / job.MANIFEST).read_text()), cli)


def test_attempts_of_a_shard_at_once_leave_one_copy(data: Data, tmp_path: Path) -> None:
    """Speculative execution, without Spark: attempts of one shard running at the same time, and
    one after the others' commit, leave its outputs once, with the bytes of the shard."""
    a = data.inputs / "a.conllu"
    shards = job.plan([str(a)], shard_bytes=a.stat().st_size // 3, split=True)
    shard = shards[1]
    out = tmp_path / "out"
    for sub in ("accepted", "lowconf", job.TASKS):
        (out / sub).mkdir(parents=True)
    fingerprint = spoolparse.Model(data.model).fingerprint
    model = {"shared": True, "path": str(data.model), "name": data.model.name, "verify": True}
    model["fingerprint"] = fingerprint
    spec = {"model": model, "output": str(out), "min_confidence": data.threshold, "threads": 1}
    with ThreadPoolExecutor(4) as pool:
        records = list(pool.map(lambda _: job.run_shard(shard, spec), range(4)))
    again = job.run_shard(shard, spec)
    assert again.pop("committed_by_earlier_attempt") is True
    counts = {(r["sentences"], r["words"], r["lowconf"]) for r in [*records, again]}
    assert len(counts) == 1
    expected_acc, expected_low = tmp_path / "acc.conllu", tmp_path / "low.conllu"
    spoolparse.Model(data.model).parse_file(a, expected_acc, expected_low, data.threshold, byte_range=shard["range"])
    assert (out / shard["accepted"]).read_bytes() == expected_acc.read_bytes()
    assert (out / shard["lowconf"]).read_bytes() == expected_low.read_bytes()
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert left == sorted([shard["accepted"], shard["lowconf"], f"{job.TASKS}/shard-{shard['id']:05d}.json"])



def test_names_that_differ_only_in_case_get_distinct_outputs(data: Data, tmp_path: Path) -> None:
    """A.conllu and a.conllu (two folders) both wrote accepted/A.conllu and accepted/a.conllu:
    one file on case-insensitive storage (macOS, Windows, SMB), where one input's sentences
    replaced the other's. The later input now gets ~2, as for an exact match, and its ~2 names
    are checked the same way; Unicode normalization is ignored too (é in one or two code
    points)."""
    small = FIXTURES / "special.conllu"
    names = ["x/A.conllu", "y/a.conllu", "z/A~2.conllu", "x/caf\u00e9.conllu", "y/cafe\u0301.conllu"]
    files = []
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(small, tmp_path / name)
        files.append(str(tmp_path / name))
    shards = job.plan(files, shard_bytes=1 << 20, split=True)
    assert [s["accepted"] for s in shards] == [
        "accepted/A.conllu",
        "accepted/a~2.conllu",
        "accepted/A~2~2.conllu",  # a~2.conllu is taken
        "accepted/caf\u00e9.conllu",
        "accepted/cafe\u0301~2.conllu",
    ]
    keys = [job._same_file_key(s[kind]) for s in shards for kind in ("accepted", "lowconf")]
    assert len(set(keys)) == len(keys)
