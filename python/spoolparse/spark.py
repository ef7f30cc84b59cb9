"""Parsing a corpus too large for one machine on Apache Spark, with spoolparse.

Run it with pyspark installed (``pip install 'spoolparse[spark]'``)::

    python -m spoolparse.spark --model M --input 'corpus/*.conllu.zst' --output DIR [--min-confidence X]

or give this file to ``spark-submit`` for a cluster (spoolparse must be installed on every
node; the model travels with ``SparkContext.addFile`` unless ``--model-on-shared-storage``)::

    spark-submit --master yarn "$(python -c 'import spoolparse.spark as s; print(s.__file__)')" \\
        --model M --input 'hdfs-mounted/corpus/*.conllu' --output DIR --min-confidence 0.9

Inputs and outputs are paths that the driver and every executor see (a local disk in local
mode, shared storage on a cluster). Every input file is one task; a plain file larger than
``--shard-mb`` is split into shards that start at a sentence (``spoolparse.shard_ranges``),
one task each. Inputs are read as ``spoolparse parse`` reads them, by extension: raw text
(``.raw``, ``.raw.zst``; the model needs a tokenizer) is never split, since its sentences are
known only once the text before them is tokenized. Each task parses with the Rust library exactly as ``spoolparse parse`` does and
writes, for input ``NAME`` (shard ``K`` of ``N``):

- ``DIR/accepted/NAME`` (``NAME.part-K`` before the extension when split): the sentences whose
  confidence is at least ``X`` (every parsed sentence without ``--min-confidence``);
- ``DIR/lowconf/NAME``: the others, and the malformed sentences (see below);
- ``DIR/_tasks/shard-K.json``: the shard's sentence counts, the task's commit record.

Bad input does not stop a nightly job (``--malformed lowconf``, the default). A malformed
sentence is written to ``lowconf/`` unparsed, as the daemon writes it: a placeholder word
(``SpoolparseUnparsed=Yes`` in MISC) after a ``# spoolparse_error = FILE:LINE: problem`` comment
and the sentence's raw lines in ``# spoolparse_raw`` comments; the manifest counts them
(``malformed_sentences``, per shard, per input and in all). ``lowconf/`` is then made even
without ``--min-confidence`` (its files hold only malformed sentences then, most of them
empty). A file that cannot be read at all (not text, not CoNLL, compressed otherwise than
with zstd, unreadable) publishes nothing of its own, the others go on: the manifest gives its
shards an ``error`` (``FILE: problem``, accepted and lowconf ``null``) and counts it in
``failed_inputs``; the driver says it in a line on stderr, and the command line exits with
status 2 (1 is a job that failed as a whole and published nothing). ``--malformed fail`` is
the strict job: the first malformed sentence, or unreadable file, fails the job as below.

No two tasks write one output name: where an input's names (whole file, or every
``NAME.part-K``) would meet an earlier input's (the same name in another folder, or a file named
like another's shard: ``a.part-00001.conllu`` beside a split ``a.conllu``), the later input,
in the order given (a directory's files sorted), becomes ``NAME~2`` (``~3``, ...) in all its
outputs. Names are compared as a case-insensitive file system compares them (case and Unicode
normalization ignored: ``A.conllu`` and ``a.conllu`` meet), so that the outputs are distinct
on any storage. The manifest says which input has which.

The parts of a split file, concatenated in order, are what ``spoolparse parse`` writes for the
whole file (``.zst`` parts too: zstd frames concatenate). Once every task is done the driver
writes ``DIR/_manifest.json`` (written last, atomically: its presence means the job is
complete), listing every input, its shards, their output files and sentence counts.

Exactly once, whatever Spark retries: each output is written under a temporary name and
renamed into place only once complete, the accepted and lowconf parts of a shard together, and
then the shard's commit record. A task whose record exists returns it without parsing again; a
task retried after a failure between the renames and the record (or running beside a
speculative copy of itself) parses the shard again and renames its identical bytes over the
first attempt's. Outputs are only ever replaced inside the job's own output directory, which
must not exist (or be empty) when the job starts: nothing outside it is overwritten. The
driver removes what killed attempts left under temporary names.

Arguments are checked on the driver before anything is created (``ValueError``). A job that
fails after creating its output directory (a task's error after Spark's retries, an interrupt)
takes back what it created, and nothing else: the shards' outputs, records and temporaries,
then the directories it made. The output directory is then as the job found it (absent, or
empty), so a rerun works; a directory that holds anything else stays (the driver says which).
The error raised is the task's own (``TaskError``: ``FILE:LINE: problem`` for bad input with
``--malformed fail``), and the command line prints it as its last line, with exit status 1.

An input may be a directory: its files are the inputs (those directly in it, sorted, hidden
ones left out; its subdirectories are not entered), or a glob pattern (``'corpus/*/*.conllu'``,
quoted so that the job expands it).

The model is opened once per executor Python process, however many tasks it runs (a
module-level cache keyed by path and checked against the driver's fingerprint), not per task.
"""

from __future__ import annotations

import argparse
import functools
import glob as globbing
import json
import os
import re
import sys
import threading
import time
import unicodedata
from typing import Any, Callable, Optional, Sequence

import spoolparse

#: Files larger than this many MiB are split into shards (``--shard-mb``).
DEFAULT_SHARD_MB = 256

#: What ``--compression`` takes: like each input, always zstd, or never.
COMPRESSIONS = ("input", "zstd", "none")

#: What ``--malformed`` takes: malformed sentences go to lowconf/ unparsed, or fail the job.
MALFORMED = ("lowconf", "fail")

#: What ``--raw-sentences`` takes: raw text's sentences end where the tokenizer ends them, or
#: at line ends.
RAW_SENTENCES = ("model", "lines")

MANIFEST = "_manifest.json"
TASKS = "_tasks"

# Executor side: models opened by this process, by (path, fingerprint).
_MODELS: dict[tuple[str, str], spoolparse.Model] = {}
_MODELS_LOCK = threading.Lock()
#: How many times this process opened a model (for tests: once per process, not per task).
opened = 0

# A temporary name of spoolparse's atomic outputs (``.NAME.tmpPID-N``), left by a killed task.
_TEMPORARY = re.compile(r"^\..*\.tmp\d+-\d+$")


def _model(ref: dict[str, Any]) -> spoolparse.Model:
    """The model ``ref`` names, opened once per process."""
    global opened
    if ref["shared"]:
        path = ref["path"]
    else:
        from pyspark import SparkFiles

        path = SparkFiles.get(ref["name"])
    key = (path, ref["fingerprint"])
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = spoolparse.Model(path, verify=ref["verify"])
            opened += 1
            if model.fingerprint != ref["fingerprint"]:
                raise spoolparse.ModelError(
                    f"{path}: model {model.fingerprint} on this executor, {ref['fingerprint']} on the driver"
                )
            _MODELS[key] = model
    return model


def _check_threshold(min_confidence: Optional[float]) -> None:
    # `not 0 <= x <= 1` is also true for NaN, which compares false with everything.
    if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
        raise ValueError(f"the minimum confidence must be within 0..1 (got {min_confidence})")


def _check_shard_mb(shard_mb: float) -> None:
    # NaN and infinity have no number of bytes, and a negative size used to mean "never split"
    # by accident (0 says it).
    if not 0.0 <= shard_mb < float("inf"):
        raise ValueError(f"the shard size must be 0 (never split) or a number of MiB (got {shard_mb})")


def _check_arguments(
    *, min_confidence: Optional[float], shard_mb: float, compression: str, malformed: str, raw_sentences: str
) -> None:
    """Raises ``ValueError`` for arguments the job cannot run with. The driver checks them
    before it creates anything: a threshold outside 0..1 would otherwise fail every task, each
    after the output directory was made, and a bad shard size or compression would be taken
    for something else."""
    _check_threshold(min_confidence)
    _check_shard_mb(shard_mb)
    if compression not in COMPRESSIONS:
        raise ValueError(f"compression must be one of {', '.join(COMPRESSIONS)} (got {compression!r})")
    if malformed not in MALFORMED:
        raise ValueError(f"malformed must be one of {', '.join(MALFORMED)} (got {malformed!r})")
    if raw_sentences not in RAW_SENTENCES:
        raise ValueError(f"raw_sentences must be one of {', '.join(RAW_SENTENCES)} (got {raw_sentences!r})")


def _output_names(path: str, compression: str) -> tuple[str, str, bool]:
    """(stem, extension, compressed) of the output for input ``path``: the input's name without
    ``.zst``, ``.conllu`` added unless it ends in a CoNLL extension (tokenized text is parsed
    into CoNLL-U, CoNLL-X stays CoNLL-X, as with ``spoolparse parse``)."""
    name = os.path.basename(path)
    compressed = name.endswith(".zst")
    if compressed:
        name = name[: -len(".zst")]
    if compression != "input":
        compressed = compression == "zstd"
    for ext in (".conllu", ".conllx", ".conll"):
        if name.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)], ext, compressed
    return name, ".conllu", compressed


def _expand(inputs: Sequence[str]) -> list[str]:
    """Files that ``inputs`` (paths, directories or glob patterns) name, in order, each once."""
    files: list[str] = []
    for pattern in inputs:
        if os.path.isdir(pattern):
            found = sorted(
                os.path.join(pattern, n)
                for n in os.listdir(pattern)
                if not n.startswith(".") and os.path.isfile(os.path.join(pattern, n))
            )
        elif os.path.exists(pattern):
            found = [pattern]
        else:
            found = sorted(p for p in globbing.glob(pattern) if os.path.isfile(p))
        if not found:
            raise FileNotFoundError(f"{pattern}: no such file, and no file matches it")
        files.extend(os.path.abspath(p) for p in found)
    return list(dict.fromkeys(files))


def _part_names(stem: str, suffix: str, count: int) -> list[str]:
    """The output names of an input split into ``count`` shards (its own name if one)."""
    if count == 1:
        return [stem + suffix]
    return [f"{stem}.part-{k:05d}{suffix}" for k in range(count)]


def _same_file_key(name: str) -> str:
    """What output names are compared by for collisions: one key for names that a case- or
    normalization-insensitive file system takes for one file (``A.conllu``, ``a.conllu``).
    Unicode's canonical caseless match; where it folds more than a file system would, a name is
    renamed that need not be, which is harmless."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def plan(
    files: Sequence[str], *, shard_bytes: int, split: bool, compression: str = "input"
) -> list[dict[str, Any]]:
    """The shards of ``files``: one per file, or several for a plain file above ``shard_bytes``.
    Each is a dict: ``id``, ``input`` (index in ``files``), ``path``, ``range`` (``None`` for
    the whole file), ``accepted`` and ``lowconf`` (output names relative to the output
    directory; ``lowconf`` is used only with a threshold)."""
    shards: list[dict[str, Any]] = []
    taken: set[str] = set()
    for index, path in enumerate(files):
        stem, ext, compressed = _output_names(path, compression)
        suffix = ext + (".zst" if compressed else "")
        ranges = spoolparse.shard_ranges(path, shard_bytes) if split else None
        parts: list[Optional[tuple[int, int]]] = list(ranges) if ranges and len(ranges) > 1 else [None]
        # Two tasks writing one name lose one's sentences (the later rename wins). Inputs from
        # different folders may share a name, and a file may be named like another's shard
        # (a.part-00001.conllu beside a split a.conllu): every name of an input, whole file or
        # shard, must be free, else the later input gets ~2, ~3, ... (a~2.part-00001.conllu).
        # Free on any storage: names that differ only in case (A.conllu, a.conllu) are one file
        # on a case-insensitive one (macOS, Windows, SMB shares), and so are names that differ
        # only in Unicode normalization on macOS; they are compared as such.
        names, n = _part_names(stem, suffix, len(parts)), 1
        while any(_same_file_key(name) in taken for name in names):
            n += 1
            names = _part_names(f"{stem}~{n}", suffix, len(parts))
        taken.update(_same_file_key(name) for name in names)
        for byte_range, name in zip(parts, names):
            shards.append(
                {
                    "id": len(shards),
                    "input": index,
                    "path": path,
                    "range": byte_range,
                    "accepted": f"accepted/{name}",
                    "lowconf": f"lowconf/{name}",
                }
            )
    return shards


def _write_json_atomically(path: str, data: Any) -> None:
    """Writes ``data`` to ``path`` so that readers see the whole file or none (temporary name,
    fsync, rename, fsync of the directory)."""
    directory = os.path.dirname(path) or "."
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp{os.getpid()}-{threading.get_ident()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _record_path(output: str, shard_id: int) -> str:
    return os.path.join(output, TASKS, f"shard-{shard_id:05d}.json")


def _has_lowconf(job: dict[str, Any]) -> bool:
    """Whether the job writes lowconf/: with a threshold, or for malformed sentences."""
    return job["min_confidence"] is not None or job.get("malformed") == "lowconf"


#: The counts of a shard that published nothing.
_NOTHING = {"sentences": 0, "words": 0, "lowconf": 0, "malformed": 0}


def _parse_shard(
    model: spoolparse.Model, shard: dict[str, Any], job: dict[str, Any]
) -> tuple[dict[str, int], Optional[str]]:
    """Parses ``shard`` into its outputs: its counts, and ``None``. With ``malformed="lowconf"``
    an input that cannot be read at all publishes nothing and is not an error of the job:
    the counts are then nothing, with what is wrong, in a line that names the file."""
    lenient = job.get("malformed") == "lowconf"
    if lenient:
        # The input, not an output, is what cannot be opened (parse_file's OSError does not
        # say which): the shard's failure, not the job's.
        try:
            with open(shard["path"], "rb"):
                pass
        except OSError as e:
            return dict(_NOTHING), f"{shard['path']}: cannot open: {e.strerror or e}"
    try:
        # overwrite=True replaces only what an earlier attempt of this very shard renamed into
        # place in this job's own directory: the same bytes.
        stats = model.parse_file(
            shard["path"],
            os.path.join(job["output"], shard["accepted"]),
            os.path.join(job["output"], shard["lowconf"]) if _has_lowconf(job) else None,
            job["min_confidence"],
            threads=job["threads"],
            overwrite=True,
            byte_range=tuple(shard["range"]) if shard["range"] is not None else None,
            malformed=job.get("malformed", "fail"),
            sentences=job.get("raw_sentences", "model"),
        )
    except spoolparse.InputError as e:
        # Malformed sentences passed on, this is a file that is no corpus at all.
        if not lenient:
            raise
        return dict(_NOTHING), str(e)
    return stats, None


def run_shard(shard: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:
    """One task: parses ``shard`` into its outputs under ``job["output"]`` and commits it;
    returns its record (what the manifest lists). Safe to run any number of times, one after
    the other or at once: see the module's documentation."""
    from pyspark import TaskContext

    context = TaskContext.get()
    attempt = context.attemptNumber() if context is not None else 0
    record_path = _record_path(job["output"], shard["id"])
    if os.path.exists(record_path):
        with open(record_path, encoding="utf-8") as f:
            done = json.load(f)
        done["committed_by_earlier_attempt"] = True
        return done
    stats, error = _parse_shard(_model(job["model"]), shard, job)
    if attempt == 0 and shard["id"] in job.get("fail_first_attempt", ()):
        # Tests: the worst moment to fail, with the outputs renamed into place and no record.
        raise RuntimeError(f"spoolparse.spark: failure injected into shard {shard['id']}, attempt {attempt}")
    record = {
        "shard": shard["id"],
        "sentences": stats["sentences"],
        "words": stats["words"],
        "lowconf": stats["lowconf"],
        "malformed": stats["malformed"],
        "error": error,
        "attempt": attempt,
        "pid": os.getpid(),
        "models_opened_by_process": opened,
    }
    _write_json_atomically(record_path, record)
    return record


def _remove_temporaries(output: str) -> int:
    """Removes outputs that killed attempts left under temporary names; returns how many."""
    removed = 0
    for sub in ("accepted", "lowconf", TASKS):
        directory = os.path.join(output, sub)
        for name in os.listdir(directory) if os.path.isdir(directory) else ():
            if _TEMPORARY.match(name) or (sub == TASKS and name.startswith(".")):
                try:
                    os.remove(os.path.join(directory, name))
                    removed += 1
                except FileNotFoundError:
                    pass
    return removed


class TaskError(RuntimeError):
    """A task of the job failed (after Spark's retries). ``str(e)`` is the task's own error as
    it raised it: ``FILE:LINE: problem`` for bad input (prefixed with its class unless it is
    one of spoolparse's); ``kind`` is that class (``spoolparse.InputError``), and the
    exception Spark raised on the driver, with the whole traceback, is ``__cause__``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message if kind.startswith("spoolparse.") else f"{kind}: {message}")
        self.kind = kind


_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"([A-Za-z_][\w.]*)(?:: (.*))?$")


def _task_error(error: BaseException) -> Optional[TaskError]:
    """The error that the failed task raised, read from the exception Spark raised on the
    driver, whose text ends with the task's Python traceback (pyspark 4's PythonException; a
    Py4JJavaError has Java frames after it): the first line after the last traceback's frames.
    ``None`` if there is no traceback (the job failed for another reason)."""
    text = str(error)
    start = text.rfind(_TRACEBACK)
    if start < 0:
        return None
    for line in text[start:].splitlines()[1:]:
        if line and not line[0].isspace():
            match = _EXCEPTION_LINE.match(line)
            return TaskError(match.group(1), match.group(2) or "") if match else None
    return None


def _make_directories(output: str, subs: Sequence[str]) -> list[str]:
    """Creates the output directory (unless it is there, empty) and ``subs`` in it; returns the
    directories it created, the output first: what a failed job may remove again."""
    os.makedirs(os.path.dirname(output), exist_ok=True)
    created: list[str] = []
    try:
        for directory in (output, *(os.path.join(output, sub) for sub in subs)):
            try:
                os.mkdir(directory)
            except FileExistsError:
                # The empty output directory that the user gave: not the job's to remove.
                continue
            created.append(directory)
    except OSError:
        # Half made (no permission, a full disk): the rerun must not find it.
        for directory in reversed(created):
            try:
                os.rmdir(directory)
            except OSError:
                pass  # not empty any more: not only the job's
        raise
    return created


def _unpublish(output: str, created: Sequence[str], shards: Sequence[dict[str, Any]]) -> list[str]:
    """After a failed job, removes what it created: the shards' outputs and commit records, what
    attempts left under temporary names, then the directories it made, so that a rerun finds
    the output directory as this job did (absent, or empty). Nothing else is removed: a
    directory that holds anything more stays. Returns the directories that stayed."""
    if os.path.exists(os.path.join(output, MANIFEST)):
        return []  # published: the job is complete
    ours = {os.path.join(output, s[kind]) for s in shards for kind in ("accepted", "lowconf")}
    ours.update(_record_path(output, s["id"]) for s in shards)
    left = []
    for directory in reversed(created):
        if directory == output:
            try:
                os.rmdir(output)
            except OSError:
                left.append(output)
            continue
        # Spark kills the job's other tasks, but not at once: one may still rename an output
        # into place or write its record. They write by path, so a directory renamed aside is
        # out of their reach, and what is listed in it below is all there will be.
        aside = os.path.join(output, f".{os.path.basename(directory)}.failed{os.getpid()}")
        try:
            os.rename(directory, aside)
        except OSError:
            left.append(directory)
            continue
        for name in os.listdir(aside):
            if os.path.join(directory, name) in ours or _TEMPORARY.match(name):
                try:
                    os.remove(os.path.join(aside, name))
                except FileNotFoundError:
                    pass
        try:
            os.rmdir(aside)
        except OSError:
            # It holds something that the job did not write: back under its name, kept.
            try:
                os.rename(aside, directory)
                left.append(directory)
            except OSError:
                left.append(aside)
    return left


def _driver_checks(
    *,
    model: str,
    inputs: Sequence[str],
    output: str,
    min_confidence: Optional[float],
    shard_mb: float,
    compression: str,
    verify: bool,
    malformed: str,
    raw_sentences: str,
) -> tuple[str, list[str], spoolparse.Model]:
    """What the driver can check alone, before anything is created: the arguments, that the
    output directory is absent or empty, the inputs (expanded) and the model (opened here, so
    that a bad one fails once, not in every task). Returns the output's absolute path, the
    input files and the model."""
    _check_arguments(
        min_confidence=min_confidence,
        shard_mb=shard_mb,
        compression=compression,
        malformed=malformed,
        raw_sentences=raw_sentences,
    )
    output = os.path.abspath(output)
    if os.path.exists(output) and (not os.path.isdir(output) or os.listdir(output)):
        raise FileExistsError(f"{output} exists and is not an empty directory: outputs are never overwritten")
    return output, _expand(inputs), spoolparse.Model(model, verify=verify)


def run(
    sc: Any,
    *,
    model: str,
    inputs: Sequence[str],
    output: str,
    min_confidence: Optional[float] = None,
    shard_mb: float = DEFAULT_SHARD_MB,
    threads_per_task: int = 1,
    compression: str = "input",
    model_on_shared_storage: bool = False,
    verify: bool = True,
    malformed: str = "lowconf",
    raw_sentences: str = "model",
    fail_first_attempt: Sequence[int] = (),
) -> dict[str, Any]:
    """Runs the job on the SparkContext ``sc``; returns the manifest (also written to
    ``OUTPUT/_manifest.json``). ``inputs`` are files, directories or glob patterns.
    ``malformed="lowconf"`` passes malformed sentences to lowconf/ and records inputs that
    cannot be read at all in the manifest (``failed_inputs``, said on stderr), ``"fail"``
    fails the job at either (see the module's documentation). ``raw_sentences="lines"`` ends
    the sentences of raw text files at line ends (``spoolparse parse --raw-sentences lines``).
    ``fail_first_attempt`` (tests) makes the first attempt of these shards fail after their
    outputs were renamed into place. Bad arguments raise ``ValueError`` before anything is
    created."""
    started = time.monotonic()
    output, files, driver_model = _driver_checks(
        model=model,
        inputs=inputs,
        output=output,
        min_confidence=min_confidence,
        shard_mb=shard_mb,
        compression=compression,
        verify=verify,
        malformed=malformed,
        raw_sentences=raw_sentences,
    )
    model_path = os.path.abspath(model)
    if not model_on_shared_storage:
        sc.addFile(model_path)
    shard_bytes = int(shard_mb * (1 << 20))
    shards = plan(files, shard_bytes=shard_bytes, split=shard_bytes > 0, compression=compression)
    job = {
        "model": {
            "shared": model_on_shared_storage,
            "path": model_path,
            "name": os.path.basename(model_path),
            "fingerprint": driver_model.fingerprint,
            "verify": verify,
        },
        "output": output,
        "min_confidence": min_confidence,
        "threads": max(1, threads_per_task),
        "malformed": malformed,
        "raw_sentences": raw_sentences,
        "fail_first_attempt": frozenset(fail_first_attempt),
    }
    subs = ("accepted", "lowconf", TASKS) if _has_lowconf(job) else ("accepted", TASKS)
    created = _make_directories(output, subs)
    try:
        manifest = _run_tasks(sc, files, shards, job, driver_model, started)
    except BaseException:
        # Without a manifest the outputs are no result, and a rerun would refuse the directory
        # that holds them: the job takes back what it created, and only that.
        try:
            kept = _unpublish(output, created, shards)
        except OSError as e:
            # Said, not raised: the job's own failure, raised below, is the error that matters.
            print(f"spoolparse.spark: removing what the failed job wrote in {output}: {e}", file=sys.stderr)
            kept = []
        if kept:
            print(f"spoolparse.spark: kept {', '.join(kept)}: they hold files the job did not write", file=sys.stderr)
        raise
    for entry in manifest["inputs"]:
        for error in entry["errors"]:
            print(f"spoolparse.spark: warning: {error}: nothing of it was published", file=sys.stderr)
    return manifest


def _run_tasks(
    sc: Any,
    files: Sequence[str],
    shards: Sequence[dict[str, Any]],
    job: dict[str, Any],
    driver_model: spoolparse.Model,
    started: float,
) -> dict[str, Any]:
    """Runs a task per shard, then writes the manifest and returns it. A task's failure is a
    ``TaskError``."""
    # Largest first: the last tasks to start are the short ones.
    order = sorted(shards, key=lambda s: -(s["range"][1] - s["range"][0] if s["range"] else os.path.getsize(s["path"])))
    try:
        records = sc.parallelize(order, max(1, len(order))).map(functools.partial(run_shard, job=job)).collect()
    except Exception as error:
        task_error = _task_error(error)
        if task_error is None:
            raise
        raise task_error from error
    by_shard = {r["shard"]: r for r in records}
    missing = [s["id"] for s in shards if s["id"] not in by_shard]
    if missing:
        raise RuntimeError(f"no record for shards {missing}")
    removed = _remove_temporaries(job["output"])
    manifest = _manifest(files, shards, by_shard, job, driver_model, started, removed)
    _write_json_atomically(os.path.join(job["output"], MANIFEST), manifest)
    return manifest


def _manifest(
    files: Sequence[str],
    shards: Sequence[dict[str, Any]],
    records: dict[int, dict[str, Any]],
    job: dict[str, Any],
    model: spoolparse.Model,
    started: float,
    removed: int,
) -> dict[str, Any]:
    threshold = job["min_confidence"]
    lowconf = _has_lowconf(job)
    entries = []
    for index, path in enumerate(files):
        parts = []
        for s in (s for s in shards if s["input"] == index):
            r = records[s["id"]]
            failed = r.get("error") is not None
            parts.append(
                {
                    "range": list(s["range"]) if s["range"] else None,
                    "accepted": None if failed else s["accepted"],
                    "accepted_sentences": r["sentences"] - r["lowconf"],
                    "lowconf": s["lowconf"] if lowconf and not failed else None,
                    "lowconf_sentences": r["lowconf"],
                    "malformed_sentences": r.get("malformed", 0),
                    "words": r["words"],
                    "attempt": r["attempt"],
                    "error": r.get("error"),
                }
            )
        entries.append(
            {
                "path": path,
                "bytes": os.path.getsize(path),
                "shards": parts,
                "sentences": sum(p["accepted_sentences"] + p["lowconf_sentences"] for p in parts),
                "accepted_sentences": sum(p["accepted_sentences"] for p in parts),
                "lowconf_sentences": sum(p["lowconf_sentences"] for p in parts),
                "malformed_sentences": sum(p["malformed_sentences"] for p in parts),
                "words": sum(p["words"] for p in parts),
                "errors": [p["error"] for p in parts if p["error"] is not None],
            }
        )
    return {
        "model": {"path": job["model"]["path"], "fingerprint": model.fingerprint},
        "min_confidence": threshold,
        "malformed": job.get("malformed", "fail"),
        "raw_sentences": job.get("raw_sentences", "model"),
        "spoolparse_version": spoolparse.__version__,
        "inputs": entries,
        "files": len(files),
        "shards": len(shards),
        "sentences": sum(e["sentences"] for e in entries),
        "accepted_sentences": sum(e["accepted_sentences"] for e in entries),
        "lowconf_sentences": sum(e["lowconf_sentences"] for e in entries),
        "malformed_sentences": sum(e["malformed_sentences"] for e in entries),
        "failed_inputs": sum(1 for e in entries if e["errors"]),
        "words": sum(e["words"] for e in entries),
        "retried_shards": sum(1 for r in records.values() if r["attempt"] > 0),
        "temporaries_removed": removed,
        "seconds": round(time.monotonic() - started, 3),
    }


def _checked_number(check: Callable[[float], None]) -> Callable[[str], float]:
    """An argparse type: a number that ``check`` accepts, so that a bad one is refused before
    Spark starts, in argparse's one-line error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        try:
            check(value)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return value

    return parse


def _arguments(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m spoolparse.spark",
        description="Parse files with spoolparse on Spark: one task per file (or per shard of a large "
        "file), outputs split by confidence, published exactly once, and a manifest.",
    )
    p.add_argument("--model", required=True, help="the model file")
    p.add_argument(
        "--input", required=True, nargs="+", metavar="PATH_OR_GLOB", help="input files, directories or glob patterns"
    )
    p.add_argument("--output", required=True, metavar="DIR", help="output directory (must not exist, or be empty)")
    p.add_argument(
        "--min-confidence",
        type=_checked_number(_check_threshold),
        metavar="X",
        help="sentences whose confidence is below X go to DIR/lowconf, the others to DIR/accepted",
    )
    p.add_argument(
        "--shard-mb",
        type=_checked_number(_check_shard_mb),
        default=DEFAULT_SHARD_MB,
        help=f"split plain files larger than this many MiB into shards (default {DEFAULT_SHARD_MB}; 0: never)",
    )
    p.add_argument(
        "--threads-per-task", type=int, default=1, help="parsing threads per task (set spark.task.cpus to match)"
    )
    p.add_argument(
        "--compression",
        choices=COMPRESSIONS,
        default="input",
        help="compress outputs with zstd: like each input (default), always or never",
    )
    p.add_argument(
        "--model-on-shared-storage",
        action="store_true",
        help="executors open --model at its path instead of receiving a copy through SparkContext.addFile",
    )
    p.add_argument(
        "--malformed",
        choices=MALFORMED,
        default="lowconf",
        help="lowconf (default): malformed sentences go to DIR/lowconf unparsed, and a file that cannot be read at "
        "all is recorded in the manifest (exit status 2); fail: either fails the job",
    )
    p.add_argument(
        "--raw-sentences",
        choices=RAW_SENTENCES,
        default="model",
        help="where the sentences of raw text files end: where the model's tokenizer ends them (default), or at "
        "every line end (one sentence per line), as `spoolparse parse --raw-sentences`",
    )
    p.add_argument("--no-verify", action="store_true", help="do not check the model's checksums when opening it")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--app-name", default="spoolparse", help="Spark application name")
    return p.parse_args(argv)


def _failed(error: BaseException) -> int:
    """Says `error` in one line, as `spoolparse` says its errors; the exit status."""
    print(f"spoolparse.spark: error: {' '.join(str(error).splitlines())}", file=sys.stderr)
    return 1


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line: starts (or joins, under spark-submit) a Spark session and runs the job."""
    args = _arguments(argv)
    # What both the checks below and the job take.
    job_args: dict[str, Any] = {
        "model": args.model,
        "inputs": args.input,
        "output": args.output,
        "min_confidence": args.min_confidence,
        "shard_mb": args.shard_mb,
        "compression": args.compression,
        "verify": not args.no_verify,
        "malformed": args.malformed,
        "raw_sentences": args.raw_sentences,
    }
    # A missing input, a bad model or a used output directory is said in a line before Spark
    # starts (seconds, and pages of its log); `run` checks again, as callers may skip this.
    try:
        _driver_checks(**job_args)
    except (OSError, ValueError) as e:
        return _failed(e)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(args.app_name)
    if args.master:
        builder = builder.master(args.master)
    # Under spark-submit the master and the executors' Python are spark-submit's. Run directly,
    # the master is --master or Spark's default, local[*]; local workers must then run this
    # interpreter, which has spoolparse (Spark's default is whatever `python3` is on the PATH).
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if not under_submit and (args.master or "local").startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = builder.getOrCreate()
    failure: Optional[Exception] = None
    try:
        manifest = run(
            spark.sparkContext,
            **job_args,
            threads_per_task=args.threads_per_task,
            model_on_shared_storage=args.model_on_shared_storage,
        )
    except (TaskError, OSError, ValueError) as e:
        # What the user has to fix (bad input, a model, the output directory): Spark has logged
        # the traceback; the last line says it as `spoolparse` would, after Spark is stopped.
        failure = e
    finally:
        spark.stop()
    if failure is not None:
        return _failed(failure)
    lowconf = ""
    malformed = manifest["malformed_sentences"]
    if args.min_confidence is not None:
        lowconf = f", {manifest['lowconf_sentences'] - malformed} below {args.min_confidence} in lowconf/"
    if args.malformed == "lowconf":
        lowconf += f", {malformed} malformed in lowconf/ unparsed"
    failed = manifest["failed_inputs"]
    unread = f"{failed} files could not be read, nothing of them published (listed in the manifest); " if failed else ""
    print(
        f"spoolparse.spark: {manifest['sentences']} sentences, {manifest['words']} words from {manifest['files']} "
        f"files in {manifest['shards']} tasks in {manifest['seconds']:.1f} s: {manifest['accepted_sentences']} in "
        f"accepted/{lowconf}; {unread}manifest {os.path.join(os.path.abspath(args.output), MANIFEST)}",
        file=sys.stderr,
    )
    # Complete, but not every input is in it: for the scheduler to notice (1 is a failed job).
    return 2 if failed else 0


if __name__ == "__main__":
    # Run as a script (`python -m spoolparse.spark`, or this file given to spark-submit), this
    # file is `__main__`: the job runs from the installed module instead, so that the task
    # function is pickled by reference and its model cache lives in that module.
    from spoolparse.spark import main as _main

    sys.exit(_main())
