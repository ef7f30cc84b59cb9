#!/usr/bin/env python3
"""Words per second of the Python ways to parse raw text (docs/python.md, "spaCy"), beside the
command line's whole process (`spoolparse parse --format raw --threads 1` of the same texts, a
blank line apart, from a file to a file): CoNLL-U strings (`Model.parse_text`), objects
(`spoolparse.pipe`, 1 and 2 threads; consumed as they come, and kept in a list) and spaCy Docs
(`spoolparse.spacy`: `nlp.pipe` in one process and with `n_process=2`, and the tokenizer's own
`pipe` with 2 threads), on en_ewt dev as raw text (scripts/conllu-to-raw.py), one text per
paragraph, REPEAT times over (default 8); the median of 3 runs each, and each one's cost per
word as a multiple of the command line's.

  usage: scripts/benchmarks/python-speed.py MODEL     (in the venv of scripts/python-env.sh,
         with spaCy: target/python-venv/bin/python scripts/benchmarks/python-speed.py MODEL)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import spoolparse
import spoolparse.spacy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    model_path = sys.argv[1]
    gold = os.path.join(ROOT, "..", "shared", "data", "ud", "en_ewt", "dev.conllu.zst")
    plain = subprocess.run(["zstd", "-dc", gold], capture_output=True, check=True).stdout
    text = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "conllu-to-raw.py")], input=plain,
                          capture_output=True, check=True).stdout.decode()
    texts = [p for p in text.split("\n\n") if p.strip()] * int(os.environ.get("REPEAT", "8"))
    model = spoolparse.Model(model_path)
    nlp = spoolparse.spacy.load(model_path, lang="en")
    words = sum(len(s.words) for d in spoolparse.pipe(model, texts) for s in d)

    cli_rate = None

    def run(name, parse):
        nonlocal cli_rate
        seconds = []
        for _ in range(3):
            started = time.perf_counter()
            parse()
            seconds.append(time.perf_counter() - started)
        rate = words / statistics.median(seconds)
        cli_rate = cli_rate or rate
        print(f"| {name} | {rate / 1000:.1f}k | {cli_rate / rate:.2f}× |", flush=True)

    def stream(items):
        for _ in items:
            pass

    binary = os.environ.get("SPOOLPARSE_BIN", os.path.join(ROOT, "target", "release", "spoolparse"))
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "texts.txt")
        with open(raw, "w") as f:
            f.write("\n\n".join(texts) + "\n")
        cli = [binary, "parse", "--model", model_path, "--format", "raw", "--threads", "1", "--overwrite",
               "--output", os.path.join(tmp, "out.conllu"), raw]
        print(f"{words} words in {len(texts)} texts\n| | words/s | cost per word, × the command line |\n|---|---:|---:|")
        run("`spoolparse parse --format raw --threads 1` (whole process)",
            lambda: subprocess.run(cli, check=True, capture_output=True))
    run("`model.parse_text`, 1 thread", lambda: [model.parse_text(t) for t in texts])
    run("`spoolparse.pipe` (objects), 1 thread", lambda: stream(spoolparse.pipe(model, texts)))
    run("`spoolparse.pipe` (objects), 1 thread, all kept in a list", lambda: list(spoolparse.pipe(model, texts)))
    run("`spoolparse.pipe` (objects), 2 threads", lambda: stream(spoolparse.pipe(model, texts, threads=2)))
    run("spaCy `nlp.pipe`, 1 process", lambda: stream(nlp.pipe(texts)))
    run("spaCy `nlp.pipe`, 1 process, all kept in a list", lambda: list(nlp.pipe(texts)))
    run("spaCy `nlp.tokenizer.pipe(threads=2)`", lambda: stream(nlp.tokenizer.pipe(texts, threads=2)))
    run("spaCy `nlp.pipe(n_process=2)`", lambda: stream(nlp.pipe(texts, n_process=2, batch_size=64)))


if __name__ == "__main__":
    main()
