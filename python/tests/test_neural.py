"""A neural model (`train --neural`) through the Python package as through the command line:
tokens, raw text, files and spaCy give what `spoolparse parse` gives with the same model."""

from __future__ import annotations

from pathlib import Path

import pytest
import spoolparse
from conftest import Data, note, sentences


def test_tokens_and_raw_text_parse_as_on_the_command_line(data: Data, neural: Path) -> None:
    model = spoolparse.Model(neural)
    assert model.has_tokenizer
    text = (data.inputs / "d.txt").read_text()
    cli = data.run("parse", "--model", neural, "--format", "text", "-", input=text.encode()).stdout.decode()
    parses = model.parse([line.split() for line in text.splitlines()])
    words = [[line.split("\t") for line in s.splitlines() if line and not line.startswith("#")] for s in sentences(cli)]
    assert len(words) == len(parses) > 0
    for cols, p in zip(words, parses):
        assert ([int(c[6]) for c in cols], [c[7] for c in cols]) == (p.heads, p.labels)
        assert [f"Conf={c:.3f}" for c in p.confidence] == [c[9] for c in cols]
    raw = "The dog barks. It sees cats!\n\nWe bought two tickets to Boston.\n"
    cli = data.run("parse", "--model", neural, "--format", "raw", "-", input=raw.encode()).stdout.decode()
    assert model.parse_text(raw, name="-") == cli


def test_parse_file_is_byte_identical_to_the_command_line(data: Data, neural: Path, tmp_path: Path) -> None:
    model = spoolparse.Model(neural)
    for path in data.files:
        name = path.name if not path.name.endswith(".txt") else path.name + ".conllu"
        cli = tmp_path / "cli" / name
        cli.parent.mkdir(exist_ok=True)
        data.run("parse", "--model", neural, path, "--output", cli)
        py = tmp_path / "py" / name
        py.parent.mkdir(exist_ok=True)
        model.parse_file(path, py)
        assert py.read_bytes() == cli.read_bytes(), path.name


def test_spacy_docs_hold_the_command_lines_trees(data: Data, neural: Path) -> None:
    try:
        import spoolparse.spacy
    except ImportError:  # scripts/python-test.sh installs it: python/requirements-dev.txt
        note("spaCy is not installed: pip install -r python/requirements-dev.txt")
        pytest.skip("spaCy is not installed")
    text = "The committee approved the new budget on Tuesday. Critics called it a mistake."
    doc = spoolparse.spacy.load(str(neural), lang="en")(text)
    cli = data.run("parse", "--model", neural, "--format", "raw", "-", input=text.encode()).stdout.decode()
    rows = [line.split("\t") for line in cli.splitlines() if line and not line.startswith("#")]
    words = [r for r in rows if r[0].isdigit()]
    assert [t.text for t in doc] == [w[1] for w in words]
    assert [t.dep_ for t in doc] == [w[7] for w in words]
    heads, base = [], 0
    for block in sentences(cli):
        ws = [line.split("\t") for line in block.splitlines() if line and line.split("\t")[0].isdigit()]
        heads += [base + int(w[6]) - 1 if w[6] != "0" else base + int(w[0]) - 1 for w in ws]
        base += len(ws)
    assert [t.head.i for t in doc] == heads
