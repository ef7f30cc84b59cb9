#!/usr/bin/env python3
"""Simulated corrections (issue 30): the N lowest-confidence arcs (`Conf=`) of a file parsed by
`spoolparse parse`, given their gold HEAD and DEPREL, every other arc left `_` (a partial
annotation). Tags stay the parser's (what the annotator saw); `:tmod` becomes UD 2.14's
`:unmarked` (en_atis is older than the example model's labels). Sentences whose chosen arcs
cross are left out. usage: partial-annotations.py PARSED GOLD N OUT"""
import sys
parsed, gold, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def read(p):
    sents, cur = [], []
    for line in open(p, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if cur: sents.append(cur); cur = []
        else:
            cur.append(line)
    if cur: sents.append(cur)
    return sents
P, G = read(parsed), read(gold)
assert len(P) == len(G)
def words(s):
    return [l.split("\t") for l in s if not l.startswith("#") and l.split("\t")[0].isdigit()]
arcs = []
for si, s in enumerate(P):
    for w in words(s):
        conf = next((float(m[5:]) for m in w[9].split("|") if m.startswith("Conf=")), 1.0)
        arcs.append((conf, si, int(w[0])))
arcs.sort()
chosen = {}
for conf, si, wi in arcs[:n]:
    chosen.setdefault(si, set()).add(wi)
def projective_completable(heads):
    # annotated arcs must not cross each other
    a = [(min(d, h), max(d, h)) for d, h in heads.items()]
    for (l1, r1) in a:
        for (l2, r2) in a:
            if l1 < l2 < r1 < r2: return False
    return True
kept = 0
with open(out, "w", encoding="utf-8") as f:
    for si in sorted(chosen):
        gw = {int(w[0]): w for w in words(G[si])}
        heads = {wi: int(gw[wi][6]) for wi in chosen[si]}
        if not projective_completable(heads):
            continue
        for line in P[si]:
            c = line.split("\t")
            if line.startswith("#"):
                if not line.startswith(("# confidence", "# tree_prob")): f.write(line + "\n")
                continue
            if not c[0].isdigit():
                f.write(line + "\n"); continue
            wi = int(c[0])
            if wi in chosen[si]:
                c[6], c[7] = gw[wi][6], gw[wi][7].replace(":tmod", ":unmarked"); kept += 1
            else:
                c[6], c[7] = "_", "_"
            c[9] = "_"
            f.write("\t".join(c) + "\n")
        f.write("\n")
print(f"{kept} arcs in {len(chosen)} sentences -> {out}", file=sys.stderr)
