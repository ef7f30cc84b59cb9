#!/usr/bin/env python3
"""LAS on full labels, which the official evaluator does not score (it compares a DEPREL's
universal part alone: `nmod:tmod` is `nmod` there), and on the arcs whose gold label ends in
SUFFIX, for each SYSTEM parse of GOLD (the same words in the same order, as `spoolparse parse`
writes them for a CoNLL-U input). docs/annotation.md, "New labels grown into a neural model".
  usage: scripts/experiments/subtype-arcs.py [--suffix :tmod] GOLD SYSTEM...
"""
import argparse
import subprocess


def arcs(path):
    """(HEAD, DEPREL) of every word of a CoNLL-U file, `.zst` or not."""
    if path.endswith(".zst"):
        text = subprocess.run(["zstd", "-dcq", path], capture_output=True, text=True, check=True).stdout
    else:
        text = open(path, encoding="utf-8").read()
    return [(c[6], c[7]) for c in (line.split("\t") for line in text.splitlines())
            if len(c) == 10 and c[0].isdigit()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suffix", default=":tmod")
    ap.add_argument("gold")
    ap.add_argument("systems", nargs="+")
    args = ap.parse_args()
    gold = arcs(args.gold)
    share = lambda pairs, same: 100 * sum(same(g, p) for g, p in pairs) / max(len(pairs), 1)
    for path in args.systems:
        system = arcs(path)
        if len(system) != len(gold):
            raise SystemExit(f"{path}: {len(system)} words, {args.gold} has {len(gold)}")
        pairs = list(zip(gold, system))
        marked = [(g, p) for g, p in pairs if g[1].endswith(args.suffix)]
        other = [(g, p) for g, p in pairs if not g[1].endswith(args.suffix)]
        predicted = sum(p[1].endswith(args.suffix) for p in system)
        print(f"{path}: full-label LAS {share(pairs, tuple.__eq__):.2f}; the {len(marked)} arcs labelled "
              f"*{args.suffix}: LAS {share(marked, tuple.__eq__):.1f}, UAS {share(marked, lambda g, p: g[0] == p[0]):.1f} "
              f"({predicted} predicted); other arcs LAS {share(other, tuple.__eq__):.2f}")


if __name__ == "__main__":
    main()
