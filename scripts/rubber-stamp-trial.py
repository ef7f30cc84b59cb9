#!/usr/bin/env python3
"""A rubber stamp against a running `spoolparse annotate` (issue 50's trial): each task is
confirmed whole, exactly as the parser drew it, after 0.26 s a word plus 1.05 s a flagged word
(a reading pace that passes the workbench's speed limits, src/workbench/review.rs). Prints each
answer and, against the gold trees of GOLD (by sent_id), how many of the stored answers' arcs are
wrong; the correction files are counted in ANNOTATED.

With HONEST=GOLD2.conllu[.zst] in the environment, an honest annotator instead: each task is
answered whole with its gold tree, from GOLD or GOLD2 (the known-answer checks' file, e.g.
retrain.heldout), at the same pace; a task whose gold the workbench refuses (a non-projective
tree) is skipped.

  usage: scripts/rubber-stamp-trial.py URL ANNOTATED GOLD.conllu[.zst] [TASKS (default 6)]
  e.g.   scripts/rubber-stamp-trial.py http://127.0.0.1:8040 runs/spool/annotated \\
             ../shared/data/ud/en_atis/dev.conllu.zst

Standard library only (zstd from the command line for .zst gold)."""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def call(url: str, method: str, path: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req) as resp:
        text = resp.read().decode()
        return resp.status, (json.loads(text) if text else None)


def gold_trees(path: Path) -> dict:
    raw = path.read_bytes()
    if path.name.endswith(".zst"):
        raw = subprocess.run(["zstd", "-dc"], input=raw, capture_output=True, check=True).stdout
    trees = {}
    for block in raw.decode().split("\n\n"):
        sent_id, arcs = None, {}
        for line in block.splitlines():
            if line.startswith("# sent_id = "):
                sent_id = line[len("# sent_id = "):].strip()
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit():
                arcs[int(cols[0])] = (int(cols[6]), cols[7])
        if sent_id:
            trees[sent_id] = arcs
    return trees


def corrections(annotated: Path) -> list:
    return sorted(p for p in annotated.glob("wb-*.conllu"))


def main() -> None:
    url, annotated, gold_path = sys.argv[1].rstrip("/"), Path(sys.argv[2]), Path(sys.argv[3])
    tasks = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    gold = gold_trees(gold_path)
    honest = os.environ.get("HONEST")
    answers_from = {**gold, **gold_trees(Path(honest))} if honest else None
    before = set(corrections(annotated))
    answered = 0
    for n in range(tasks):
        status, task = call(url, "GET", "/api/next")
        if status == 204:
            print("the queue is empty")
            break
        words = task["words"]
        flagged = sum(1 for w in words if w["check"])
        pause = 0.26 * len(words) + 1.05 * flagged
        time.sleep(pause)
        arcs = [{"id": w["id"], "head": w["head"], "deprel": w["deprel"]} for w in words]
        if answers_from is not None:
            tree = answers_from[task["sent_id"]]
            arcs = [{"id": i, "head": h, "deprel": d} for i, (h, d) in sorted(tree.items())]
        try:
            _, answer = call(url, "POST", "/api/answer", {"task": task["task"], "arcs": arcs, "whole": True})
        except urllib.error.HTTPError as e:
            print(f"task {n + 1}: refused ({e.code}: {e.read().decode()}), skipped")
            call(url, "POST", "/api/skip", {"task": task["task"]})
            continue
        answered += 1
        what = "answered whole with gold" if answers_from is not None else "confirmed whole"
        print(f"task {n + 1}: {len(words)} words, {flagged} flagged, {what} after {pause:.2f} s: "
              f"{json.dumps(answer)}")
    # What was stored: the correction files written (an answer's reply is no proof: a
    # known-answer check is acknowledged as any answer is).
    new = [p for p in corrections(annotated) if p not in before]
    arcs_stored, wrong = 0, 0
    for path in new:
        text = path.read_text()
        sent_id = next((l[len("# sent_id = "):] for l in text.splitlines() if l.startswith("# sent_id = ")), None)
        tree = gold.get(sent_id, {})
        for line in text.splitlines():
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit() and cols[6] != "_":
                arcs_stored += 1
                wrong += tree.get(int(cols[0])) != (int(cols[6]), cols[7])
    reviewed = sum("# reviewed = all" in p.read_text() for p in new)
    suspect = len(list((annotated / "suspect").glob("wb-*.conllu")))
    print(f"stored as corrections: {len(new)} of {answered} answers ({reviewed} with # reviewed = all), "
          f"{wrong} of their {arcs_stored} arcs wrong against gold ({100 * wrong / max(arcs_stored, 1):.1f}%); "
          f"set aside in suspect/: {suspect}")
    _, models = call(url, "GET", "/api/models")
    print("standing:", json.dumps(models.get("annotators")))


if __name__ == "__main__":
    main()
