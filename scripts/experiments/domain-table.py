#!/usr/bin/env python3
"""The tables of scripts/experiments/domain-shifts.sh OUT: for each shift, budget and way in, the
domain's dev LAS (one figure per seed), the share it closed of the distance from the model to a
model trained on all of the domain's data, the treebank's dev LAS and its change, the gate's
decisions, and the cycles' wall time and peak RSS.

  usage: scripts/experiments/domain-table.py OUT
"""
import glob
import json
import os
import re
import sys

SHIFTS = {"atis": ("en_atis", "en_ewt"), "genre": ("reviews", "base-dev")}


def before(log):
    """The model's LAS on each --score file, from a simulate-annotator log."""
    found = {}
    for line in open(log):
        m = re.match(r"the model before any cycle on (\S+): (.*)", line)
        if m:
            found[m.group(1)] = json.loads(m.group(2))["las"]
    return found


def pick(scores, name):
    return next(v for k, v in scores.items() if name in k)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    gates = []
    for shift, (domain, base) in SHIFTS.items():
        runs = sorted(glob.glob(f"{out}/runs/{shift}-grid/") + glob.glob(f"{out}/runs/{shift}-seed*/"))
        runs = [r.rstrip("/") for r in runs]
        if not runs:
            continue
        first = before(f"{runs[0]}.log")
        b_dom, b_base = pick(first, domain), pick(first, base)
        if shift == "atis":
            rows = [json.loads(l) for l in open(f"{out}/runs/atis-ceiling/results.jsonl")]
            ceiling = pick({k: v["las"] for k, v in rows[0].items() if ":" in k}, domain)
        else:
            ceiling = json.load(open(f"{out}/reviews-ceiling.json"))["las"]
        cells = {}
        for run in runs:
            for line in open(f"{run}/results.jsonl"):
                r = json.loads(line)
                scores = {k: v["las"] for k, v in r.items() if ":" in k}
                cells.setdefault((r["budget"], r["strategy"]), []).append(
                    (os.path.basename(run), r["arcs"], pick(scores, domain), pick(scores, base), r["decision"],
                     r["wall_seconds"], r["peak_rss_mib"]))
        gap = ceiling - b_dom
        gates.append((shift, domain, b_dom, runs))
        print(f"\n{shift}: the model {b_dom:.2f} on {domain} dev, {b_base:.2f} on {base}; "
              f"trained on all of the domain's data {ceiling:.2f} (distance {gap:.2f})")
        print("| corrected arcs | way in | answered | domain dev LAS | distance closed | treebank dev LAS (change) "
              "| gate | cycle wall, peak RSS |")
        print("|---:|---|---:|---:|---:|---:|---|---:|")
        for (budget, strategy), v in sorted(cells.items()):
            join = lambda f: " / ".join(f(x) for x in v)  # noqa: E731
            answered = sorted({x[1] for x in v})
            way = "none (the treebank alone)" if budget == 0 else "API (queue)" if strategy == "queue" else "annotated/"
            print(f"| {budget:,} | {way} "
                  f"| {'/'.join(f'{a:,}' for a in answered)} | {join(lambda x: f'{x[2]:.2f}')} "
                  f"| {join(lambda x: f'{100 * (x[2] - b_dom) / gap:.0f}%')} "
                  f"| {join(lambda x: f'{x[3]:.2f}')} ({join(lambda x: f'{x[3] - b_base:+.2f}')}) "
                  f"| {join(lambda x: x[4])} | {join(lambda x: f'{x[5]:.0f} s')}, {max(x[6] for x in v)} MiB |")

    for shift, domain, b_dom, runs in gates:
        gate_table(shift, domain, b_dom, runs)


def interval(b):
    return f"{b['delta']:+.2f} [{b['low']:+.2f}, {b['high']:+.2f}]" if b else "–"


def gate_table(shift, domain, b_dom, runs):
    """What the gate saw in each cycle: your text as a whole (what it decides on), its corrected arcs,
    the arcs it could not score and how many the candidate changed, and the treebank's figure."""
    print(f"\n{shift}: what the gate saw (LAS differences, candidate minus serving model, 90% intervals)")
    print("| corrected arcs | way in | run | your text as a whole (words) | its corrected arcs | unscored arcs, "
          "changed | held-out treebank | gate | domain dev change |")
    print("|---:|---|---|---:|---:|---:|---:|---|---:|")
    for run in runs:
        for line in open(f"{run}/results.jsonl"):
            r = json.loads(line)
            g = r.get("gate") or {}
            if not g.get("annotations"):
                continue
            whole, unscored = g.get("annotations_whole"), g.get("uncertain") or {}
            scores = {k: v["las"] for k, v in r.items() if ":" in k}
            way = "API (queue)" if r["strategy"] == "queue" else "annotated/"
            print(f"| {r['arcs']:,} | {way} | {os.path.basename(run)} | {interval(whole)} ({whole['words'] if whole else 0}) "
                  f"| {interval(g['annotations'])} | {unscored.get('arcs', '–')}, {unscored.get('changed', '–')} "
                  f"| {interval(g['heldout'])} | {r['decision']} | {pick(scores, domain) - b_dom:+.2f} |")


if __name__ == "__main__":
    main()
