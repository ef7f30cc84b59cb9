#!/usr/bin/env python3
"""How well the workbench's queue finds the parser's errors (issue 29, "queue precision").

Parses a gold CoNLL-U file (default: en_atis train, a domain the en_ewt model was not trained
on) with MODEL, as the daemon would, into a lowconf file; serves it with `spoolparse annotate`;
takes every task through the JSON API (GET /api/next until 204) as an annotator would see them;
and compares the arcs each task asks to check with the gold trees. Beside it, the plain
ranking: every arc of the same low-confidence sentences ordered by its calibrated confidence
alone. Prints, for both:
  - the share of wrong arcs among the first N arcs asked (N = 500, 1000, 2000);
  - the share of all the pool's parser errors found within the first 30% of its arcs.

usage: scripts/queue-precision.py MODEL [GOLD.conllu[.zst]] [--min-confidence 0.8]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sentences(text):
    """(sent_id, [(head, deprel, conf)]) per sentence of CoNLL-U text."""
    out, sid, words = [], None, []
    for line in text.splitlines() + [""]:
        if not line.strip():
            if words:
                out.append((sid, words))
            sid, words = None, []
        elif line.startswith("# sent_id = "):
            sid = line[len("# sent_id = "):].strip()
        elif not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                conf = next((float(e[5:]) for e in cols[9].split("|") if e.startswith("Conf=")), None)
                words.append((cols[6], cols[7], conf))
    return out


def read(path):
    data = Path(path).read_bytes()
    if str(path).endswith(".zst"):
        data = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True).stdout
    return data.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("gold", nargs="?", default=str(ROOT.parent / "shared/data/ud/en_atis/train.conllu.zst"))
    ap.add_argument("--min-confidence", default="0.8")
    args = ap.parse_args()
    binary = os.environ.get("SPOOLPARSE_BIN", str(ROOT / "target/release/spoolparse"))
    gold = {sid: words for sid, words in sentences(read(args.gold))}
    tmp = Path(tempfile.mkdtemp(prefix="queue-precision-"))
    (tmp / "out/lowconf").mkdir(parents=True)
    low = tmp / "out/lowconf/corpus.conllu"
    subprocess.run([binary, "parse", "--model", args.model, args.gold, "--output", str(tmp / "accepted.conllu"),
                    "--min-confidence", args.min_confidence, "--rejected", str(low)], check=True)
    pool = sentences(low.read_text())
    (tmp / "cfg.toml").write_text(f'[paths]\nspool = "{tmp}/spool"\noutput = "{tmp}/out"\nmodel = "{args.model}"\n')
    server = subprocess.Popen([binary, "annotate", "--config", str(tmp / "cfg.toml"), "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in server.stderr:
            if "workbench on http://" in line:
                url = line.split("workbench on ")[1].strip().rstrip("/")
                break
        while json.load(urllib.request.urlopen(url + "/api/stats"))["queued"] < 1:
            time.sleep(0.2)
        time.sleep(2)  # the scan of the one file is complete once queued stops moving
        asked, latencies = [], []
        while True:
            start = time.perf_counter()
            reply = urllib.request.urlopen(url + "/api/next")
            latencies.append(time.perf_counter() - start)
            if reply.status == 204:
                break
            task = json.load(reply)
            g = gold[task["sent_id"]]
            for w in task["words"]:
                if w["check"]:
                    head, deprel, _ = g[w["id"] - 1]
                    asked.append(str(w["head"]) != head or w["deprel"] != deprel)
    finally:
        server.terminate()
        server.wait()
    # The plain ranking: every arc of the pool by its confidence, least confident first.
    arcs = []
    for sid, words in pool:
        for (head, deprel, conf), (ghead, gdeprel, _) in zip(words, gold[sid]):
            arcs.append((conf if conf is not None else 0.0, head != ghead or deprel != gdeprel))
    arcs.sort(key=lambda a: a[0])
    plain = [wrong for _, wrong in arcs]
    errors = sum(plain)
    cut = int(0.3 * len(plain))
    print(f"pool: {len(pool)} low-confidence sentences (min confidence {args.min_confidence}), {len(plain)} arcs, "
          f"{errors} wrong ({100 * errors / len(plain):.1f}%); queue: {len(latencies) - 1} tasks, {len(asked)} arcs asked")
    print("| ranking | wrong in first 500 | 1,000 | 2,000 | errors found in first 30% of the pool's arcs |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, order in [("workbench queue (3 words a task)", asked), ("plain confidence, every arc", plain)]:
        shares = [f"{100 * sum(order[:n]) / max(1, len(order[:n])):.1f}%" for n in (500, 1000, 2000)]
        print(f"| {name} | {' | '.join(shares)} | {100 * sum(order[:cut]) / errors:.1f}% |")
    latencies.sort()
    print(f"GET /api/next: p50 {1000 * latencies[len(latencies) // 2]:.1f} ms, "
          f"p99 {1000 * latencies[int(0.99 * (len(latencies) - 1))]:.1f} ms over {len(latencies)} calls")


if __name__ == "__main__":
    sys.exit(main())
