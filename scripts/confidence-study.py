#!/usr/bin/env python3
"""What each signal and each fitting input adds to the whole pipeline's confidence (issue 38),
from the rows `examples/confidence_rows.rs` writes; run by `STUDY=1 scripts/confidence-eval.sh`,
which leaves them in DIR: rows.TB.{a,b}.tsv (each dev half, the treebank's own model),
rows.en_ewt.full.tsv and unlike.{hu_szeged,el_gdt,en_atis}.tsv (the en_ewt model).

Each fit (logistic regression by Newton's method with the L2 penalty of
src/learn/confidence_model.rs, the same features) is made on one half and scored on the other:
arc ECE from raw text and from gold tokens, and the LAS of the words of the most confident
sentences holding half of them minus the best ranking's, means over the six halves; and the arc
ECE of text unlike the training data, from raw text, fitted on all of en_ewt dev. Last, the
parser's isotonic map fitted like for like (on the other half's gold tokens, as `train` fits
it), for the comparison the note makes.

    usage: scripts/confidence-study.py DIR
"""
import csv
import sys

import numpy as np

TREEBANKS = ["en_ewt", "hu_szeged", "el_gdt"]
INPUTS = {"r": "raw text", "g": "gold tokens", "u": "unknown forms"}
# Signal groups, by letter: t tagger margins, w unknown share, s lengths, k tokenizer margins,
# h head's probability, m sentence's mean probability, R relation, U UPOS.
ALL = "twskhmRU"


def load(path):
    rows = list(csv.DictReader(open(path), delimiter="\t"))
    d = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    out = {"input": d["input"], "sentence": d["sentence"].astype(int)}
    for k in d:
        if k not in out:
            out[k] = d[k].astype(float)
    return out


def sure(m):
    return np.where(np.isfinite(m), np.minimum(np.log1p(np.maximum(m, 0)) / 6, 1), 1.0)


def logit(p):
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


def features(d, groups):
    lg = logit(d["parser"])
    f = [np.ones_like(lg), lg / 4] + [np.maximum(lg - k, 0) / 4 for k in (-1, 1, 3, 5)]
    f.append((d["parser"] <= 0).astype(float))
    if "t" in groups:
        f += [sure(d["dependent_tag"]), sure(d["head_tag"])]
    if "w" in groups:
        b = np.maximum(d["unknown_share"] - 0.3, 0)
        f += [b, b * lg / 4, b * b]
    if "s" in groups:
        f += [np.log(np.maximum(d["words"], 1)) / 4, np.log1p(d["distance"]) / 4]
    if "k" in groups:
        f += [sure(d["token_margin"]), sure(d["sentence_margin"])]
    if "h" in groups:
        f.append(logit(d["head_parser"]) / 4)
    if "m" in groups:
        f.append(logit(d["sentence_parser"]) / 4)
    if "R" in groups:
        f += [(d["relation"] == i).astype(float) for i in range(37)]
    if "U" in groups:
        f += [(d["upos"] == i).astype(float) for i in range(17)]
    return np.stack(f, 1)


def fit(x, y):
    w = np.zeros(x.shape[1])
    w[0] = np.log(y.mean() / (1 - y.mean()))
    penalty = np.eye(len(w)) * max(1e-4 * len(y), 1.0)
    penalty[0, 0] = 0
    for _ in range(25):
        p = 1 / (1 + np.exp(-x @ w))
        g = x.T @ (p - y) + penalty @ w
        h = (x * (p * (1 - p))[:, None]).T @ x + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w


def ece(c, y):
    b = np.minimum((c * 10).astype(int), 9)
    return sum(abs(y[b == i].sum() - c[b == i].sum()) for i in range(10)) / len(y)


def kept_las(score, right, words, share=0.5):
    order = np.argsort(-score, kind="stable")
    cum = np.cumsum(words[order])
    take = order[np.concatenate([[True], cum[:-1] < share * words.sum()])]
    return 100 * right[take].sum() / words[take].sum()


def gap_at_half(d, c, mask):
    s = d["sentence"][mask]
    idx = np.searchsorted(np.unique(s), s)
    n = np.bincount(idx)
    r = np.bincount(idx, d["right"][mask])
    mean = np.bincount(idx, c[mask]) / n
    return kept_las(mean, r, n) - kept_las(r / n, r, n)


def predictor(groups, inputs):
    def predict(train, test):
        keep = np.isin(train["input"], [INPUTS[i] for i in inputs])
        w = fit(features(train, groups)[keep], train["right"][keep])
        return 1 / (1 + np.exp(-features(test, groups) @ w))
    return predict


def isotonic(train, test):
    m = train["input"] == "gold tokens"
    x, y = train["parser"][m], train["right"][m]
    order = np.argsort(x, kind="stable")
    blocks = []
    for xi, yi in zip(x[order], y[order]):
        if blocks and blocks[-1][3] == xi:
            blocks[-1][:3] = [blocks[-1][0] + xi, blocks[-1][1] + yi, blocks[-1][2] + 1]
        else:
            blocks.append([xi, yi, 1, xi])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            b = blocks.pop()
            blocks[-1][:3] = [blocks[-1][0] + b[0], blocks[-1][1] + b[1], blocks[-1][2] + b[2]]
            blocks[-1][3] = b[3]
    xs = np.array([b[0] / b[2] for b in blocks])
    ys = np.array([b[1] / b[2] for b in blocks])
    return np.interp(test["parser"], xs, ys)


def report(directory, name, predict, unlike=True):
    raw, gold, gaps = [], [], []
    for tb in TREEBANKS:
        for half, other in (("a", "b"), ("b", "a")):
            train, test = load(f"{directory}/rows.{tb}.{other}.tsv"), load(f"{directory}/rows.{tb}.{half}.tsv")
            c = predict(train, test)
            r, g = test["input"] == "raw text", test["input"] == "gold tokens"
            raw.append(ece(c[r], test["right"][r]))
            gold.append(ece(c[g], test["right"][g]))
            gaps.append(gap_at_half(test, c, r))
    line = f"| {name} | {np.mean(raw):.4f} | {np.mean(gold):.4f} | {np.mean(gaps):.2f} |"
    if unlike:
        train = load(f"{directory}/rows.en_ewt.full.tsv")
        eces = []
        for tb in ["hu_szeged", "el_gdt", "en_atis"]:
            test = load(f"{directory}/unlike.{tb}.tsv")
            r = test["input"] == "raw text"
            eces.append(ece(predict(train, test)[r], test["right"][r]))
        line += " " + " / ".join(f"{e:.3f}" for e in eces) + " |"
    print(line, flush=True)


def main():
    directory = sys.argv[1]
    print("| fit | ECE raw text | ECE gold tokens | LAS at 50% kept − best | ECE Hungarian / Greek / en_atis |")
    print("|---|---:|---:|---:|---|")
    report(directory, "every signal, every input (the default)", predictor(ALL, "rgu"))
    names = {"t": "the tagger's margins", "w": "the unknown share", "s": "the lengths",
             "k": "the tokenizer's margins", "h": "the head's probability",
             "m": "the sentence's mean probability", "R": "the relation", "U": "the UPOS"}
    for g, name in names.items():
        report(directory, f"without {name}", predictor(ALL.replace(g, ""), "rgu"))
    report(directory, "without the rows of unknown forms", predictor(ALL, "rg"))
    report(directory, "without the rows of gold tokens", predictor(ALL, "ru"))
    report(directory, "the parser's probability alone, on raw text", predictor("", "r"))
    report(directory, "the parser's isotonic map, fitted like for like", isotonic, unlike=False)


if __name__ == "__main__":
    main()
