"""The Spark job on a real standalone cluster: a master and two workers, each a process of its
own started with `spark-class` from the installed pyspark, all bound to 127.0.0.1, and the job
given to `spark-submit --master spark://127.0.0.1:PORT`. Its outputs must be what `spoolparse
parse` writes, byte for byte, each sentence exactly once: in a plain run, and in a run where
the JVM of an executor is killed (kill -9) while it parses a shard."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest
from conftest import Data, decompress, sentences

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/python-test.sh installs it)")

import spoolparse.spark as job  # noqa: E402
from test_spark import check_against_cli, expected  # noqa: E402

SPARK_HOME = Path(pyspark.__file__).resolve().parent
#: Every process of a test cluster has this in its environment (set for the master, workers and
#: driver, inherited by executors and their Python workers), with the cluster's directory as its
#: value: teardown finds them by it, whatever process group they moved to (pyspark's daemon
#: makes its own) or whichever parent they lost.
MARK = "SPOOLPARSE_TEST_CLUSTER"
#: How long the cluster's processes may take to start, and a job to run, on a loaded machine.
START_TIMEOUT = 240.0
JOB_TIMEOUT = 480.0
# A temporary output of a task, named by spoolparse with its process id: `.NAME.tmpPID-N`.
TEMPORARY = re.compile(r"^\.(?P<name>.+)\.tmp(?P<pid>\d+)-\d+$")


def marked(mark: str) -> list[int]:
    """The processes that belong to the cluster marked ``mark``."""
    entry = f"{MARK}={mark}".encode()
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if entry in f.read().split(b"\0"):
                        pids.append(int(name))
            except OSError:
                pass  # gone, or not ours
    return pids


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def parent(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The command (field 2) is in parentheses and may hold spaces: fields after the last ')'.
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def executor_of(pid: int) -> Optional[int]:
    """The executor JVM (`CoarseGrainedExecutorBackend`) that process ``pid`` descends from."""
    while pid and pid > 1:
        if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in command_line(pid):
            return pid
        pid = parent(pid) or 0
    return None


def alive(pid: int) -> bool:
    """Running, not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# The addresses of /proc/net/tcp{,6} (hex, 32-bit words in host order) on 127.0.0.1 or ::1.
LOOPBACK = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
NOWHERE = {"00000000", "0" * 32}  # a listening socket's remote address


def sockets(pids: list[int]) -> list[tuple[int, str, str]]:
    """The TCP sockets of ``pids``: (pid, local address, remote address) as /proc/net shows them."""
    owner = {}
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    owner[int(link[8:-1])] = pid
        except OSError:
            pass
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split()
                if int(fields[9]) in owner:
                    found.append((owner[int(fields[9])], fields[1], fields[2]))
    return found


def off_loopback(found: list[tuple[int, str, str]]) -> list[str]:
    """The sockets bound to, or connected to, an address other than 127.0.0.1 (or ::1)."""
    return [
        f"{pid} {command_line(pid)[:120]} {local} {remote}"
        for pid, local, remote in found
        if local.split(":")[0] not in LOOPBACK or remote.split(":")[0] not in LOOPBACK | NOWHERE
    ]


class Cluster:
    """A standalone Spark cluster on 127.0.0.1: a master and two workers (one core and 1 GiB for
    executors each), with their work, log and scratch directories under ``root``."""

    def __init__(self, root: Path):
        self.root = root
        self.mark = str(root)
        self.started: list[subprocess.Popen] = []
        conf = root / "conf"  # empty: no spark-env.sh or spark-defaults.conf of the machine's
        for d in (conf, root / "logs", root / "local"):
            d.mkdir(parents=True)
        self.env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_CONF_DIR": str(conf),
            "SPARK_LOG_DIR": str(root / "logs"),
            "SPARK_LOCAL_DIRS": str(root / "local"),
            # Every socket of the master, workers, executors and driver on loopback, and the
            # names they give each other too (not the machine's name, which may resolve to
            # another interface).
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOCAL_HOSTNAME": "127.0.0.1",
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
            MARK: self.mark,
        }
        self.url = ""

    def spawn(self, name: str, argv: list[str]) -> tuple[subprocess.Popen, Path]:
        """Starts ``argv`` in a process group of its own, its output in ``logs/NAME.log``."""
        log = self.root / "logs" / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, cwd=self.root,
            )  # fmt: skip
        self.started.append(proc)
        return proc, log

    def start(self) -> None:
        spark_class = str(SPARK_HOME / "bin" / "spark-class")
        # Port 0: the master picks a free port and says which; its web UI too.
        master, master_log = self.spawn(
            "master",
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
             "--webui-port", "0"],
        )  # fmt: skip
        found = wait_for(master, master_log, re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)"))
        self.url = found.group(1)
        workers = []
        for k in (1, 2):
            work = self.root / f"work{k}"
            work.mkdir()
            workers.append(
                self.spawn(
                    f"worker{k}",
                    [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                     "--webui-port", "0", "--cores", "1", "--memory", "1g", "--work-dir", str(work), self.url],
                )  # fmt: skip
            )
        for proc, log in workers:
            wait_for(proc, log, re.compile(r"Successfully registered with master"))

    def stop(self) -> list[str]:
        """Kills every process of the cluster (its groups, then whatever else carries its mark,
        until none is left); returns the command lines of those still there after 30 s."""
        for proc in self.started:
            if proc.returncode is None:  # not reaped: its group's id cannot be another's yet
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 30
        while True:
            left = [pid for pid in marked(self.mark) if alive(pid) and pid != os.getpid()]
            if not left or time.monotonic() > deadline:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        for proc in self.started:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        return [command_line(pid)[:200] for pid in left]

    def submit(
        self, corpus: "Corpus", output: Path, *, during: Callable[[Path, int], bool]
    ) -> tuple[dict[str, Any], str]:
        """Runs the job with spark-submit on the cluster, calling ``during(TEMPORARY, PID)`` for
        each temporary output that a task's process PID writes while the job runs, until it
        returns True. Returns the manifest and spark-submit's output."""
        submit = [
            str(SPARK_HOME / "bin" / "spark-submit"), "--master", self.url, "--deploy-mode", "client",
            "--driver-memory", "512m", "--executor-memory", "512m",
            "--conf", "spark.executor.cores=1",
            # Tasks start once both executors are there (up to 120 s), not on the first alone.
            "--conf", "spark.scheduler.minRegisteredResourcesRatio=1.0",
            "--conf", "spark.scheduler.maxRegisteredResourcesWaitingTime=120s",
            "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
            "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false",
            "--conf", f"spark.pyspark.python={sys.executable}",
            "--conf", f"spark.pyspark.driver.python={sys.executable}",
            "--conf", f"spark.local.dir={self.root / 'local'}",
            job.__file__,
            "--model", str(corpus.data.model), "--input", str(corpus.inputs), "--output", str(output),
            "--min-confidence", str(corpus.data.threshold), "--shard-mb", str(corpus.shard_mb),
        ]  # fmt: skip
        driver, log = self.spawn(f"submit-{len(self.started)}", submit)
        accepted = output / "accepted"
        watching = True
        try:
            deadline = time.monotonic() + JOB_TIMEOUT
            while driver.poll() is None:
                if time.monotonic() > deadline:
                    pytest.fail(f"the job did not end in {JOB_TIMEOUT:.0f} s: {log}")
                if watching:
                    try:
                        names = os.listdir(accepted)
                    except FileNotFoundError:
                        names = []  # not made yet (or taken back by a failed job)
                    for name in names:
                        m = TEMPORARY.match(name)
                        if m and during(accepted / name, int(m.group("pid"))):
                            watching = False
                            break
                time.sleep(0.02)
        finally:
            if driver.poll() is None:
                os.killpg(driver.pid, signal.SIGKILL)
                driver.wait()
        text = log.read_text(errors="replace")
        assert driver.returncode == 0, text[-5000:]
        return json.loads((output / job.MANIFEST).read_text()), text


def wait_for(proc: subprocess.Popen, log: Path, pattern: re.Pattern) -> re.Match:
    """The first match of ``pattern`` in the log of ``proc``, once it is written there."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        found = pattern.search(log.read_text(errors="replace"))
        if found:
            return found
        if proc.poll() is not None:
            pytest.fail(f"{proc.args[1]} exited with status {proc.returncode}:\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"{proc.args[1]}: no {pattern.pattern!r} in {START_TIMEOUT:.0f} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        yield c
    finally:
        # Also when starting failed, or a test did: no process of the cluster outlives it.
        left = c.stop()
        assert not left, f"processes of the test cluster still running: {left}"


class Corpus:
    """Inputs for the cluster: the data's files, and a plain file large enough to keep each of
    its shards' tasks parsing for a while; what `spoolparse parse` writes for each."""

    def __init__(self, data: Data, root: Path, big_sentences: int, shards: int):
        self.data = data
        self.inputs = root / "inputs"
        self.inputs.mkdir()
        for path in data.files:
            shutil.copy(path, self.inputs / path.name)
        # Each sentence with an id of its own, so that every one is seen to be there once.
        pool = sentences((data.inputs / "a.conllu").read_text())
        self.ids = [f"big-{k}" for k in range(big_sentences)]
        big = (f"# sent_id = {i}\n{pool[k % len(pool)]}" for k, i in enumerate(self.ids))
        (self.inputs / "big.conllu").write_text("".join(big))
        self.shard_mb = (self.inputs / "big.conllu").stat().st_size / shards / (1 << 20)
        self.cli = expected(data, root, data.threshold, sorted(self.inputs.iterdir()))


@pytest.fixture(scope="module")
def corpus(data: Data, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    # About 1 s of parsing per shard on one core of the 2-CPU machine.
    return Corpus(data, tmp_path_factory.mktemp("corpus"), big_sentences=40_000, shards=8)


def check_exactly_once(output: Path, manifest: dict[str, Any], corpus: Corpus) -> None:
    """The CLI's bytes for every input, and, for the large one, each sentence id once across its
    accepted and lowconf parts, with the manifest's counts."""
    check_against_cli(output, manifest, corpus.cli)
    [entry] = [e for e in manifest["inputs"] if Path(e["path"]).name == "big.conllu"]
    assert len(entry["shards"]) >= 4
    ids = []
    for shard in entry["shards"]:
        for kind in ("accepted", "lowconf"):
            found = [s.split("\n", 1)[0] for s in sentences(decompress(output / shard[kind]).decode())]
            assert len(found) == shard[f"{kind}_sentences"], shard[kind]
            ids += found
    assert sorted(ids) == sorted(f"# sent_id = {i}" for i in corpus.ids)
    assert entry["sentences"] == len(corpus.ids)
    assert manifest["sentences"] == sum(e["sentences"] for e in manifest["inputs"])


def test_a_job_on_a_standalone_cluster_gives_the_command_lines_bytes_once(
    cluster: Cluster, corpus: Corpus, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}
    executors: set[Optional[int]] = set()

    def watch(temporary: Path, pid: int) -> bool:
        if not executors:
            # While a task parses, every process of the cluster is there, with its sockets.
            pids = marked(cluster.mark)
            seen["commands"] = [command_line(p) for p in pids]
            seen["sockets"] = sockets(pids)
        executors.add(executor_of(pid))
        return False

    out = tmp_path / "out"
    manifest, _ = cluster.submit(corpus, out, during=watch)
    # Master, workers, executors, driver and Python workers, all on loopback only.
    # Executors of this job only: one of the previous job on the same cluster may still be
    # exiting after its worker gave the core to this job's (seen once in CI: three).
    app_ids = [m.group(1) for c in seen["commands"] if (m := re.search(r"--app-id (\S+)", c))]
    newest = max(app_ids, default="")
    commands = [c for c in seen["commands"] if "CoarseGrainedExecutorBackend" not in c or f"--app-id {newest}" in c]
    count = {k: sum(k in c for c in commands) for k in ("deploy.master.Master", "deploy.worker.Worker",
             "CoarseGrainedExecutorBackend", "deploy.SparkSubmit", "pyspark.daemon")}  # fmt: skip
    # (A daemon's forked Python workers have its command line.)
    assert list(count.values())[:4] == [1, 2, 2, 1] and count["pyspark.daemon"] >= 2, (count, seen["commands"])
    assert len(seen["sockets"]) >= 10, seen["sockets"]
    assert not off_loopback(seen["sockets"]), off_loopback(seen["sockets"])
    # The tasks ran in both workers' executor JVMs (the driver waits for both to register).
    assert None not in executors and len(executors) == 2, executors
    assert manifest["retried_shards"] == 0
    check_exactly_once(out, manifest, corpus)


def test_a_job_whose_executor_is_killed_mid_shard_still_gives_every_sentence_once(
    cluster: Cluster, corpus: Corpus, tmp_path: Path
) -> None:
    killed: dict[str, Any] = {}

    def kill_its_executor(temporary: Path, pid: int) -> bool:
        executor = executor_of(pid)
        if executor is None or not temporary.exists():
            return False
        os.kill(executor, signal.SIGKILL)
        killed.update(executor=executor, worker=pid, temporary=temporary)
        # The executor's Python daemon sees its JVM go and ends its workers: the task's own
        # process dies before it could finish the shard, and its temporary stays behind.
        deadline = time.monotonic() + 30
        while (alive(executor) or alive(pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        killed["dead"] = not alive(executor) and not alive(pid)
        killed["temporary_left"] = temporary.exists()
        killed["manifest_then"] = (temporary.parent.parent / job.MANIFEST).exists()
        return True

    out = tmp_path / "out"
    manifest, log = cluster.submit(corpus, out, during=kill_its_executor)
    assert killed, "no executor was killed: no task was seen running"
    assert killed["dead"], f"the executor {killed['executor']} or its task's process {killed['worker']} survived"
    assert killed["temporary_left"] and not killed["manifest_then"], "the kill did not come in the middle of a shard"
    # Spark saw the executor's tasks lost and ran them again, on another executor.
    assert "ExecutorLostFailure" in log, log[-5000:]
    name = TEMPORARY.match(killed["temporary"].name).group("name")
    [shard] = [s for e in manifest["inputs"] for s in e["shards"] if s["accepted"] == f"accepted/{name}"]
    assert shard["attempt"] >= 1, shard
    assert manifest["retried_shards"] >= 1
    # What the killed attempt left under its temporary names, the driver removed.
    assert manifest["temporaries_removed"] >= 1
    assert not killed["temporary"].exists()
    check_exactly_once(out, manifest, corpus)


def test_the_loopback_check_sees_a_socket_on_every_interface(tmp_path: Path) -> None:
    """The check above, on a process listening on 0.0.0.0 and one on 127.0.0.1."""
    listen = "import socket, sys, time; s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen()\n"
    listen += "print(1, flush=True); time.sleep(60)"
    procs = {}
    try:
        for host in ("0.0.0.0", "127.0.0.1"):
            procs[host] = subprocess.Popen([sys.executable, "-c", listen, host], stdout=subprocess.PIPE)
            assert procs[host].stdout is not None and procs[host].stdout.readline() == b"1\n"
        wild, local = (sockets([procs[h].pid]) for h in ("0.0.0.0", "127.0.0.1"))
        assert len(wild) == len(local) == 1
        assert off_loopback(wild) and not off_loopback(local)
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
