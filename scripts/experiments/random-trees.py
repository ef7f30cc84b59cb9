#!/usr/bin/env python3
"""Random trees over a treebank's sentences, as an attacker (or a careless annotator) would drop
them into `annotated/`: the words and tags of each sentence kept, every HEAD and DEPREL replaced
by a uniformly random spanning tree (each word, in a random order, attached to a random word
already in the tree) with labels drawn from the file's own DEPRELs; or, with --replace F, the
gold tree with that share of its arcs (root arc excepted) given a random head that keeps a tree
and a random label; or, with --gold, the gold trees themselves (the honest annotations to
compare with). No mark of the parser (`Conf=`) is written: every arc counts as reviewed.

    scripts/experiments/random-trees.py ../shared/data/ud/en_atis/train.conllu.zst OUT.conllu \
        [--count 100] [--skip 0] [--replace 0.3 | --gold] [--seed 1]

Python 3 standard library only; `.zst` input is read through `zstd -dc`.
"""

import argparse
import random
import subprocess
import sys


def read_blocks(path):
    if path.endswith(".zst"):
        text = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode("utf-8")
    else:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return [b for b in text.split("\n\n") if b.strip()]


def word_rows(lines):
    """Indices of the syntactic word lines (integer ID) of a block's lines."""
    return [i for i, l in enumerate(lines) if not l.startswith("#") and l.split("\t")[0].isdigit()]


def descends(heads, h, w):
    """Whether h is w or below it (heads: word -> head, 0 the root)."""
    for _ in range(len(heads) + 1):
        if h == w:
            return True
        if h == 0:
            return False
        h = heads[h]
    return True


def spanning(n, labels, rng):
    order = list(range(1, n + 1))
    rng.shuffle(order)
    arcs = {order[0]: (0, "root")}
    for k in range(1, n):
        arcs[order[k]] = (order[rng.randrange(k)], rng.choice(labels))
    return arcs


def replaced(gold, share, labels, rng):
    heads = {w: h for w, (h, _) in gold.items()}
    arcs = dict(gold)
    for w in sorted(gold):
        if heads[w] == 0 or rng.random() >= share:
            continue
        candidates = [h for h in heads if h != heads[w] and not descends(heads, h, w)]
        if candidates:
            heads[w] = rng.choice(candidates)
            arcs[w] = (heads[w], rng.choice(labels))
    return arcs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--replace", type=float)
    ap.add_argument("--gold", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    blocks = read_blocks(args.input)
    labels = sorted(
        {
            l.split("\t")[7]
            for b in blocks
            for l in b.split("\n")
            if not l.startswith("#") and l.split("\t")[0].isdigit() and l.split("\t")[7] not in ("root", "_")
        }
    )
    out = []
    for block in blocks[args.skip : args.skip + args.count]:
        lines = block.split("\n")
        rows = word_rows(lines)
        gold = {}
        for i in rows:
            cols = lines[i].split("\t")
            gold[int(cols[0])] = (int(cols[6]), cols[7])
        if args.gold:
            arcs = gold
        elif args.replace is not None:
            arcs = replaced(gold, args.replace, labels, rng)
        else:
            arcs = spanning(len(rows), labels, rng)
        for i in rows:
            cols = lines[i].split("\t")
            head, deprel = arcs[int(cols[0])]
            cols[6], cols[7] = str(head), deprel
            lines[i] = "\t".join(cols)
        out.append("\n".join(lines))
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n\n".join(out) + "\n\n")
    kind = "gold" if args.gold else (f"{args.replace:.0%} replaced" if args.replace is not None else "random spanning")
    print(f"{args.output}: {len(out)} sentences, {kind} trees", file=sys.stderr)


if __name__ == "__main__":
    main()
