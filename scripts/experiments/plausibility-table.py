#!/usr/bin/env python3
"""Set-aside counts of candidate plausibility rules, from the rows of
`cargo run --release --example plausibility_rates -- MODEL GOLD > rows.tsv`: per kind of tree
(gold, spanning, earlier, part30, lowconf, lowconf_as_given), how many sentences each rule sets aside, alone and
together with the agreement check.

    scripts/experiments/plausibility-table.py rows.tsv [--min-arcs 2]
"""

import argparse
import collections
import csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows")
    ap.add_argument("--min-arcs", type=int, default=2)
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.rows, encoding="utf-8"), delimiter="\t"))
    kinds = ["gold", "spanning", "earlier", "part30", "lowconf", "lowconf_as_given"]
    n = collections.Counter(r["kind"] for r in rows)
    print("sentences: " + ", ".join(f"{k} {n[k]}" for k in kinds))
    agreement = collections.Counter(r["kind"] for r in rows if r["agreement_suspect"] == "1")
    print("agreement check alone: " + ", ".join(f"{k} {agreement[k]}" for k in kinds))

    def table(title, rule):
        hits = collections.Counter()
        both = collections.Counter()
        for r in rows:
            ranks = [int(x) for x in r["ranks"].split(",") if x]
            arcs = int(r["arcs"])
            hit = arcs >= args.min_arcs and rule(ranks, arcs, float(r["deficit"]), int(r["crossing"]))
            hits[r["kind"]] += hit
            both[r["kind"]] += hit or r["agreement_suspect"] == "1"
        cells = ", ".join(f"{k} {hits[k]} ({both[k]})" for k in kinds)
        print(f"{title}: {cells}")

    for k in [1, 2, 3, 5, 10]:
        for share in [0.2, 0.3, 0.4, 0.5]:
            table(f"ranked >= {k} on more than {share:.0%}", lambda r, a, d, c: sum(x >= k for x in r) > share * a)
    for share in [0.2, 0.3, 0.4, 0.5]:
        table(f"crossing on more than {share:.0%}", lambda r, a, d, c: c > share * a)
    for d in [1.0, 1.5, 2.0, 3.0, 4.0]:
        table(f"deficit above {d} nats per arc", lambda r, a, dd, c: dd > d)
    combos = [(k, share, cross) for k in [3, 5, 10, 20] for share in [0.3, 0.4, 0.5, 0.6] for cross in [0.25, 0.3]]
    for k, share, cross in combos:
        table(
            f"ranked >= {k} on more than {share:.0%} or crossing on more than {cross:.0%}",
            lambda r, a, d, c: sum(x >= k for x in r) > share * a or c > cross * a,
        )


if __name__ == "__main__":
    main()
