"""Fixtures of the Python tests: the `spoolparse` binary to compare with, a small model trained
by it, and input files. With the shared treebanks beside the repository (`../shared/data/ud`)
the model is trained on a slice of en_ewt train and the inputs are slices of en_ewt dev;
without them, on the repository's fixtures (the tests say so on stderr, and still run).
scripts/python-test.sh builds the binary and sets SPOOLPARSE_BIN."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
UD = REPO.parent / "shared" / "data" / "ud"
FIXTURES = REPO / "tests" / "fixtures"


def note(message: str) -> None:
    """Says something on the real stderr, which pytest does not capture: a skip must be seen."""
    sys.__stderr__.write(f"\nSKIPPED: {message}\n")
    sys.__stderr__.flush()


def binary() -> Path:
    explicit = os.environ.get("SPOOLPARSE_BIN")
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = Path(explicit) if explicit else target / "release" / "spoolparse"
    if not path.is_file():
        pytest.exit(f"{path} not found: build it (cargo build --release) or set SPOOLPARSE_BIN", returncode=2)
    return path


def sentences(text: str) -> list[str]:
    """The sentences of CoNLL text, each with its closing blank line."""
    return [s + "\n\n" for s in text.split("\n\n") if s.strip()]


def raw_text(conllu: str) -> str:
    """The raw text of CoNLL-U, its paragraphs as `# newpar`/`# newdoc` mark them and its
    sentences run on within them (scripts/conllu-to-raw.py)."""
    script = REPO / "scripts" / "conllu-to-raw.py"
    return subprocess.run([sys.executable, str(script)], input=conllu, capture_output=True, text=True, check=True).stdout


# Words of the synthetic sentences: FORM, LEMMA, UPOS, XPOS, FEATS.
VERB = "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"
WORDS = [
    ("the", "the", "DET", "DT", "Definite=Def|PronType=Art"), ("dog", "dog", "NOUN", "NN", "Number=Sing"),
    ("barks", "bark", "VERB", "VBZ", VERB), ("at", "at", "ADP", "IN", "_"),
    ("cats", "cat", "NOUN", "NNS", "Number=Plur"), ("quickly", "quickly", "ADV", "RB", "_"),
    ("big", "big", "ADJ", "JJ", "Degree=Pos"), ("and", "and", "CCONJ", "CC", "_"), ("sees", "see", "VERB", "VBZ", VERB),
]


def synthetic(n: int, seed: int) -> list[str]:
    """`n` sentences of [`WORDS`] in a seeded random order, each word attached at random to the
    one before or to the first (projective trees no model learns exactly): without the shared
    treebanks, text whose parses have confidences that differ."""
    import random

    rng = random.Random(seed)
    out = []
    for s in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 8))]
        lines = [f"# sent_id = syn{seed}-{s}", "# text = " + " ".join(w[0] for w in words)]
        for i, (form, lemma, upos, xpos, feats) in enumerate(words):
            head, deprel = (0, "root") if i == 0 else (rng.choice([i, 1]), "dep")
            lines.append(f"{i + 1}\t{form}\t{lemma}\t{upos}\t{xpos}\t{feats}\t{head}\t{deprel}\t_\t_")
        out.append("\n".join(lines) + "\n\n")
    return out


def decompress(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.endswith(".zst"):
        return subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout
    return data


def compress(data: bytes, path: Path) -> None:
    subprocess.run(["zstd", "-q", "-f", "-o", str(path)], input=data, check=True)


class Data:
    """A model and inputs in a temporary folder, and the CLI to compare with."""

    def __init__(self, root: Path):
        self.root = root
        self.bin = binary()
        self.from_treebank = UD.is_dir() and not os.environ.get("SPOOLPARSE_TEST_NO_UD")
        inputs = root / "inputs"
        inputs.mkdir()
        if self.from_treebank:
            train = sentences(decompress(UD / "en_ewt" / "train.conllu.zst").decode())
            dev = sentences(decompress(UD / "en_ewt" / "dev.conllu.zst").decode())
            (root / "train.conllu").write_text("".join(train[:1500]))
            (root / "dev.conllu").write_text("".join(dev[:200]))
            self.run("train", "--train", root / "train.conllu", "--dev", root / "dev.conllu")
            a, b = dev[200:500], dev[500:700]
        else:
            note(f"{UD} not found: the Python tests train their model on tests/fixtures instead of en_ewt")
            special = (FIXTURES / "special.conllu").read_text()
            (root / "train.conllu").write_text(special * 5 + "".join(synthetic(200, 1)))
            self.run("train", "--train", root / "train.conllu")
            a, b = sentences(special) * 10 + synthetic(150, 2), sentences(special) * 10
        # a.conllu begins with the fixture's multiword tokens and empty nodes: they must come
        # back byte for byte.
        (inputs / "a.conllu").write_text((FIXTURES / "special.conllu").read_text() + "".join(a))
        compress("".join(b).encode(), inputs / "b.conllu.zst")
        shutil.copy(FIXTURES / "small.conllx", inputs / "c.conllx")
        forms = [[line.split("\t")[1] for line in s.splitlines() if line and line.split("\t")[0].isdigit()] for s in b]
        (inputs / "d.txt").write_text("".join(" ".join(f) + "\n" for f in forms[:50]))
        self.inputs = inputs
        self.files = sorted(inputs.iterdir())
        self.model = root / "m.model"
        self.threshold = self.threshold_of(self.model)

    def run(self, command: str, *args: object, input: Optional[bytes] = None) -> subprocess.CompletedProcess:
        argv = [str(self.bin), command, *map(str, args)]
        if command == "train":
            argv += ["--output", str(self.root / "m.model"), "--epochs", "3", "--tagger", "--jackknife", "0"]
            argv += ["--tagger-epochs", "3", "--tokenizer"]
        result = subprocess.run(argv, input=input, capture_output=True)
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed:\n{result.stderr.decode()}")
        return result

    def run_fails(self, command: str, *args: object) -> str:
        """Runs a command that must fail; its stderr."""
        result = subprocess.run([str(self.bin), command, *map(str, args)], capture_output=True)
        assert result.returncode != 0, f"spoolparse {command} succeeded"
        return result.stderr.decode()

    def threshold_of(self, model: Path) -> float:
        """A threshold that sends some sentences of a.conllu each way through ``model``, between
        two printed confidences (never on one: they are rounded to 3 decimals)."""
        out = self.run("parse", "--model", model, self.inputs / "a.conllu").stdout.decode()
        values = sorted({float(line.split("=")[1]) for line in out.splitlines() if line.startswith("# confidence =")})
        assert len(values) >= 2, f"all sentences have the same confidence {values}: no threshold splits them"
        mid = len(values) // 2
        return (values[mid - 1] + values[mid]) / 2

    def cli(
        self, input: Path, out_dir: Path, threshold: Optional[float], *extra: object, model: Optional[Path] = None
    ) -> tuple[Path, Optional[Path], str]:
        """`spoolparse parse INPUT --output ... [--min-confidence X --rejected ...] [EXTRA...]`
        with ``model`` (default: the test model): the two outputs (named like the input, so that
        compression is the same) and stderr."""
        out_dir.mkdir(parents=True, exist_ok=True)
        name = input.name if not input.name.endswith((".txt", ".raw")) else input.name + ".conllu"
        accepted = out_dir / f"accepted-{name}"
        args: list[object] = ["--model", model or self.model, input, "--output", accepted]
        lowconf = None
        if threshold is not None:
            lowconf = out_dir / f"lowconf-{name}"
            args += ["--min-confidence", threshold, "--rejected", lowconf]
        result = self.run("parse", *args, *extra)
        return accepted, lowconf, result.stderr.decode()


@pytest.fixture(scope="session")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    return Data(tmp_path_factory.mktemp("spoolparse"))


@pytest.fixture(scope="session")
def neural(data: Data) -> Path:
    """A small neural model with a linear analysis and tokenizer, trained on the test model's data."""
    path = data.root / "neural.model"
    argv = [data.bin, "train", "--train", data.root / "train.conllu", "--output", path, "--neural"]
    argv += ["--neural-size", "small", "--neural-epochs", "3", "--tagger", "--jackknife", "0", "--tagger-epochs", "2"]
    result = subprocess.run([*map(str, argv), "--tokenizer"], capture_output=True)
    assert result.returncode == 0, result.stderr.decode()
    assert "neural parser" in data.run("inspect", path).stdout.decode()
    return path
