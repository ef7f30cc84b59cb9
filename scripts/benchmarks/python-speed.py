#!/usr/bin/env python3
"""Words per second of the Python ways to parse raw text (docs/python.md, "spaCy"): CoNLL-U
strings (`Model.parse_text`), objects (`spoolparse.pipe`, 1 and 2 threads) and spaCy Docs
(`spoolparse.spacy`: `nlp.pipe` in one process and with `n_process=2`, and the tokenizer's own
`pipe` with 2 threads), on en_ewt dev as raw text (scripts/conllu-to-raw.py), one text per
paragraph, REPEAT times over (default 8); the median of 3 runs each.

  usage: scripts/benchmarks/python-speed.py MODEL     (in the venv of scripts/python-env.sh,
         with spaCy: target/python-venv/bin/python scripts/benchmarks/python-speed.py MODEL)
"""
import os
import statistics
import subprocess
import sys
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

    def run(name, parse):
        seconds = []
        for _ in range(3):
            started = time.perf_counter()
            parse()
            seconds.append(time.perf_counter() - started)
        median = statistics.median(seconds)
        print(f"| {name} | {words / median / 1000:.1f}k |", flush=True)

    print(f"{words} words in {len(texts)} texts\n| | words/s |\n|---|---:|")
    run("`model.parse_text`, 1 thread", lambda: [model.parse_text(t) for t in texts])
    run("`spoolparse.pipe` (objects), 1 thread", lambda: list(spoolparse.pipe(model, texts)))
    run("`spoolparse.pipe` (objects), 2 threads", lambda: list(spoolparse.pipe(model, texts, threads=2)))
    run("spaCy `nlp.pipe`, 1 process", lambda: list(nlp.pipe(texts)))
    run("spaCy `nlp.tokenizer.pipe(threads=2)`", lambda: list(nlp.tokenizer.pipe(texts, threads=2)))
    run("spaCy `nlp.pipe(n_process=2)`", lambda: list(nlp.pipe(texts, n_process=2, batch_size=64)))


if __name__ == "__main__":
    main()
