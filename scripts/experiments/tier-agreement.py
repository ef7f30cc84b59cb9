#!/usr/bin/env python3
r"""What the two tiers' agreement adds to the ranking of sentences for a precision (issue 54,
item 4).

The neural model (the serving tier) parses a treebank's dev text from raw text; the linear model
then parses the neural model's output (CoNLL-U, so both parses have the same tokens and words;
`--retag`, so the linear model's own tagger runs). Per sentence:

- words (the neural parse's syntactic words) and words right (as the CoNLL 2018 evaluator's LAS
  counts them: aligned to a gold word, its head aligned to the gold word's head (or both the
  root) and the universal part of its deprel the gold one's; the alignment is the evaluator's,
  `conll18_ud_eval.py` imported as a module),
- the neural parse's `# confidence` (its mean arc confidence, calibrated),
- the agreement: the share of words whose HEAD and universal DEPREL are the same in both parses,
- the linear parse's `# confidence`.

Rankings (sentence scores, kept at or above a cut), fixed before the numbers were seen:

  neural      the neural confidence alone (what `--min-precision` ranks by today)
  agreement   the agreement alone
  n*agree     neural confidence x agreement
  agreed 1st  the sentences on which the tiers agree on every word first, by neural
              confidence, then the others, by neural confidence
  n*linear    neural confidence x linear confidence (the second tier's confidence, no agreement)

For each ranking and P in 0.90, 0.95, 0.98, over SPLITS random half/half splits of the
sentences (seeded): on one half the lowest cut whose kept words are right at >= P is chosen
(`plain`: the empirical precision; `CP`: the one-sided Clopper-Pearson lower bound at 90% over
the words divided by the design effect, as src/learn/precision.rs counts them, though over all
of the half's distinct scores rather than its fixed sequence of a grid); it is applied to the
other half, where the share of the words kept and their precision are measured, and whether the
precision held (>= P). No cut passing on the first half: nothing kept (share 0), counted apart.

Each tier's parse is timed (whole process, `--threads 1`, median of ROUNDS runs, alternating).

Usage (standard library only; the parses run one after the other):

  python3 scripts/experiments/tier-agreement.py --bin /tmp/bin/spoolparse \
      --neural /tmp/up-rev/all-neural.model --linear /tmp/up-rev/all-fast.model \
      --work /tmp/ta [--splits 100] [--rounds 5] [--seed 54] [--eval PATH] \
      en_ewt=/work/shared/data/ud/en_ewt/dev.conllu.zst \
      en_atis=/work/shared/data/ud/en_atis/dev.conllu.zst:lines

A dataset is NAME=GOLD[.zst][:lines]. Its raw text is `scripts/conllu-to-raw.py`'s (paragraphs,
the model's tokenizer splits sentences), or with `:lines` the gold `# text` one a line, parsed
with `--raw-sentences lines` (en_atis: queries without punctuation). WORK gets the raw text,
both parses (NAME.N.conllu, NAME.F.conllu) and the per-sentence rows (NAME.rows.tsv); the
tables go to stdout as markdown.
"""
import argparse
import importlib.util
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGETS = (0.90, 0.95, 0.98)
RISK = 0.1


def load_evaluator(path):
    spec = importlib.util.spec_from_file_location("conll18_ud_eval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------
# Reading CoNLL-U


def read_sentences(path):
    """Per sentence: (comments, words), words the rows of integer IDs (ranges, empty nodes out)."""
    out, comments, words = [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line:
                if words or comments:
                    out.append((comments, words))
                comments, words = [], []
            elif line.startswith("#"):
                comments.append(line)
            else:
                cols = line.split("\t")
                if cols[0].isdigit():
                    words.append(cols)
    if words or comments:
        out.append((comments, words))
    return [s for s in out if s[1]]


def confidence(comments):
    for c in comments:
        m = re.match(r"#\s*confidence\s*=\s*(\S+)", c)
        if m:
            return float(m.group(1))
    raise SystemExit("a sentence without `# confidence`")


def words_right(ev, gold_path, system_path):
    """Per system word (file order): right as LAS counts it, through the evaluator's alignment.

    The alignment lives inside `evaluate`; it is read back by putting markers into the UPOS
    column, which `evaluate` compares for every aligned pair (gold word, system word)."""
    with open(gold_path, encoding="utf-8") as f:
        gold = ev.load_conllu(f)
    with open(system_path, encoding="utf-8") as f:
        system = ev.load_conllu(f)
    aligned = {}

    class Marker:
        def __init__(self, index):
            self.index = index

        def __eq__(self, other):
            aligned[other.index] = self.index
            return True

        def __hash__(self):
            return self.index

    for i, w in enumerate(gold.words):
        w.columns[ev.UPOS] = Marker(i)
    for j, w in enumerate(system.words):
        w.columns[ev.UPOS] = Marker(j)
    scores = ev.evaluate(gold, system)
    g_index = {id(w): i for i, w in enumerate(gold.words)}
    s_index = {id(w): j for j, w in enumerate(system.words)}
    right = []
    for j, w in enumerate(system.words):
        g = aligned.get(j)
        ok = False
        if g is not None:
            gw = gold.words[g]
            if w.columns[ev.DEPREL] == gw.columns[ev.DEPREL]:
                if w.parent is None or gw.parent is None:
                    ok = w.parent is None and gw.parent is None
                else:
                    ok = aligned.get(s_index[id(w.parent)]) == g_index[id(gw.parent)]
        right.append(ok)
    las = scores["LAS"]
    assert las.correct == sum(right), (las.correct, sum(right))
    return right, las.f1, len(system.words), len(gold.words)


# ---------------------------------------------------------------------------------------------
# Parsing and timing


def run_timed(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("failed: " + " ".join(cmd))
    m = re.search(r"words in ([0-9.]+) s", p.stderr)
    return wall, (float(m.group(1)) if m else float("nan")), p.stderr


def prepare(args, name, spec):
    lines = spec.endswith(":lines")
    gold_src = spec[: -len(":lines")] if lines else spec
    gold = os.path.join(args.work, name + ".gold.conllu")
    with open(gold, "wb") as f:
        if gold_src.endswith(".zst"):
            subprocess.run(["zstd", "-dc", gold_src], stdout=f, check=True)
        else:
            with open(gold_src, "rb") as g:
                f.write(g.read())
    raw = os.path.join(args.work, name + ".raw")
    with open(raw, "w", encoding="utf-8") as f:
        if lines:
            with open(gold, encoding="utf-8") as g:
                for line in g:
                    if line.startswith("# text = "):
                        f.write(line[len("# text = "):])
        else:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "conllu-to-raw.py"), gold],
                           stdout=f, check=True, text=True)
    n_out = os.path.join(args.work, name + ".N.conllu")
    f_out = os.path.join(args.work, name + ".F.conllu")
    neural = [args.bin, "parse", "--model", args.neural, "--format", "raw", "--threads", "1",
              "--overwrite", "--output", n_out, raw]
    if lines:
        neural[-1:-1] = ["--raw-sentences", "lines"]
    linear = [args.bin, "parse", "--model", args.linear, "--retag", "--threads", "1",
              "--overwrite", "--output", f_out, n_out]
    times = {"neural": [], "linear": []}
    inner = {"neural": [], "linear": []}
    for _ in range(args.rounds):
        for tier, cmd in (("neural", neural), ("linear", linear)):
            wall, parse_s, _ = run_timed(cmd)
            times[tier].append(wall)
            inner[tier].append(parse_s)
    return gold, raw, n_out, f_out, times, inner, (neural, linear)


def rows_of(ev, gold, n_out, f_out):
    ns, fs = read_sentences(n_out), read_sentences(f_out)
    assert len(ns) == len(fs), "the tiers' sentences differ"
    right, _, n_sys, n_gold = words_right(ev, gold, n_out)
    f_right, _, _, _ = words_right(ev, gold, f_out)
    assert n_sys == sum(len(w) for _, w in ns), "word counts differ from the evaluator's"
    rows, at = [], 0
    for (nc, nw), (fc, fw) in zip(ns, fs):
        assert [w[1] for w in nw] == [w[1] for w in fw], "the tiers' words differ"
        same = sum(1 for a, b in zip(nw, fw)
                   if a[6] == b[6] and a[7].split(":")[0] == b[7].split(":")[0])
        k = sum(right[at:at + len(nw)])
        fk = sum(f_right[at:at + len(nw)])
        at += len(nw)
        rows.append({"words": len(nw), "right": k, "linear_right": fk, "nconf": confidence(nc),
                     "agree": same / len(nw), "fconf": confidence(fc)})
    return rows, n_gold


RANKINGS = [
    ("neural", lambda r: r["nconf"]),
    ("agreement", lambda r: r["agree"]),
    ("n*agree", lambda r: r["nconf"] * r["agree"]),
    ("agreed 1st", lambda r: r["nconf"] + (2.0 if r["agree"] == 1.0 else 0.0)),
    ("n*linear", lambda r: r["nconf"] * r["fconf"]),
]


# ---------------------------------------------------------------------------------------------
# Clopper-Pearson over effective counts (a port of src/learn/precision.rs)


def incomplete_beta(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x)
                     - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * beta_fraction(a, b, x) / a
    return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b


def beta_fraction(a, b, x):
    tiny = 1e-300

    def guard(v):
        return tiny if abs(v) < tiny else v

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    f = d
    for m in range(1, 100000):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        f *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        step = d * c
        f *= step
        if abs(step - 1.0) < 1e-15:
            break
    return f


def effective(m, n, k, w2, k2, cross):
    """Words and words right divided by the design effect (precision.rs, Tally::effective)."""
    p = k / max(n, 1)
    if m < 2 or p <= 0.0 or p >= 1.0:
        return n, k
    mean_words = n / m
    spread = max(k2 - 2 * p * cross + p * p * w2, 0.0)
    variance = spread / (m * (m - 1)) / (mean_words * mean_words)
    design = max(variance / (p * (1 - p) / n), 1.0)
    return n / design, k / design


def bound_holds(m, n, k, w2, k2, cross, target):
    """The CP lower bound at level RISK is at least target: P(X >= k | n, target) <= RISK."""
    if k <= 0:
        return False
    ne, ke = effective(m, n, k, w2, k2, cross)
    return incomplete_beta(ke, ne - ke + 1.0, target) <= RISK


# ---------------------------------------------------------------------------------------------
# Choosing a cut on one half, measuring it on the other


def cuts(half, score):
    """Per distinct score (highest first): (cut, sentences, words, right, Σw², Σk², Σwk) of the
    sentences at or above it."""
    order = sorted(half, key=score, reverse=True)
    out, m, n, k, w2, k2, cr = [], 0, 0, 0, 0.0, 0.0, 0.0
    for i, r in enumerate(order):
        m += 1
        n += r["words"]
        k += r["right"]
        w2 += r["words"] ** 2
        k2 += r["right"] ** 2
        cr += r["words"] * r["right"]
        s = score(r)
        if i + 1 == len(order) or score(order[i + 1]) != s:
            out.append((s, m, n, k, w2, k2, cr))
    return out


def choose(table, target, rule):
    """The lowest cut that passes (None: none does)."""
    for s, m, n, k, w2, k2, cr in reversed(table):
        if k < target * n:
            continue
        if rule == "plain" or bound_holds(m, n, k, w2, k2, cr, target):
            return s
    return None


def evaluate_splits(rows, splits, seed):
    rng = random.Random(seed)
    halves = []
    idx = list(range(len(rows)))
    for _ in range(splits):
        rng.shuffle(idx)
        h = len(idx) // 2
        halves.append(([rows[i] for i in idx[:h]], [rows[i] for i in idx[h:]]))
    results = {}
    for name, score in RANKINGS:
        for rule in ("plain", "CP"):
            for target in TARGETS:
                kept, prec, held, none = [], [], 0, 0
                for a, b in halves:
                    t = choose(cuts(a, score), target, rule)
                    total = sum(r["words"] for r in b)
                    if t is None:
                        none += 1
                        kept.append(0.0)
                        continue
                    n = sum(r["words"] for r in b if score(r) >= t)
                    k = sum(r["right"] for r in b if score(r) >= t)
                    kept.append(n / total)
                    if n:
                        prec.append(k / n)
                        held += k >= target * n
                    else:
                        none += 1
                results[(name, rule, target)] = (statistics.mean(kept),
                                                 statistics.mean(prec) if prec else float("nan"),
                                                 held, len(halves) - none, none, kept)
    return results


def in_sample(rows, score, target):
    """Largest share of the words kept at precision >= target over all sentences (an upper
    reference, chosen on the data it is measured on)."""
    total = sum(r["words"] for r in rows)
    best = 0.0
    for s, m, n, k, *_ in cuts(rows, score):
        if k >= target * n:
            best = max(best, n / total)
    return best


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--neural", required=True)
    ap.add_argument("--linear", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--eval", default=os.path.join(ROOT, "..", "shared", "tools", "conll18_ud_eval.py"))
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=54)
    ap.add_argument("datasets", nargs="+", help="NAME=GOLD[.zst][:lines]")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ev = load_evaluator(args.eval)

    for spec in args.datasets:
        name, path = spec.split("=", 1)
        gold, raw, n_out, f_out, times, inner, cmds = prepare(args, name, path)
        rows, n_gold = rows_of(ev, gold, n_out, f_out)
        with open(os.path.join(args.work, name + ".rows.tsv"), "w") as f:
            f.write("words\tright\tlinear_right\tnconf\tagree\tfconf\n")
            for r in rows:
                f.write("{words}\t{right}\t{linear_right}\t{nconf}\t{agree:.6f}\t{fconf}\n".format(**r))
        words = sum(r["words"] for r in rows)
        right = sum(r["right"] for r in rows)
        f_right = sum(r["linear_right"] for r in rows)
        full = [r for r in rows if r["agree"] == 1.0]
        fw = sum(r["words"] for r in full)
        fk = sum(r["right"] for r in full)
        word_agree = sum(r["agree"] * r["words"] for r in rows) / words
        print(f"## {name}\n")
        print("Commands (each run {} times, alternating):\n".format(args.rounds))
        for c in cmds:
            print("    " + " ".join(c))
        print()
        tn, tl = statistics.median(times["neural"]), statistics.median(times["linear"])
        print("| tier | whole process, median (s) | runs (s) | parse as the binary reports it, median (s) |")
        print("| --- | ---: | --- | ---: |")
        for tier in ("neural", "linear"):
            print("| {} | {:.3f} | {} | {:.2f} |".format(
                tier, statistics.median(times[tier]), " ".join(f"{t:.3f}" for t in times[tier]),
                statistics.median(inner[tier])))
        print(f"\nSecond tier / first tier, whole process: {tl / tn:.1%}\n")
        print(f"{len(rows)} sentences, {words} words ({n_gold} gold); LAS precision (words right / "
              f"parsed words): neural {right / words:.2%}, linear on the neural tokens "
              f"{f_right / words:.2%}. Words on which the tiers agree: {word_agree:.2%}; sentences "
              f"agreed on every word: {len(full) / len(rows):.1%} of the sentences, {fw / words:.1%} "
              f"of the words, precision {fk / max(fw, 1):.2%} (the others: "
              f"{(right - fk) / max(words - fw, 1):.2%}).\n")
        res = evaluate_splits(rows, args.splits, args.seed)
        for rule in ("plain", "CP"):
            print(f"Rule `{rule}`, {args.splits} splits (seed {args.seed}): words kept on the other "
                  "half (mean share), their precision there (mean over splits that kept any), "
                  "splits where it held >= P (of those that kept any; none: no cut passed on the "
                  "choosing half)" + (", and the in-sample reference (largest share kept at >= P "
                                      "over all sentences)" if rule == "plain" else "") + ".\n")
            head = "| ranking | " + " | ".join(f"P={t:.2f} kept | prec. | held" for t in TARGETS)
            if rule == "plain":
                head += " | " + " | ".join(f"in-sample {t:.2f}" for t in TARGETS)
            print(head + " |")
            cols = 3 * len(TARGETS) + (len(TARGETS) if rule == "plain" else 0)
            print("| --- |" + " ---: |" * cols)
            for rname, score in RANKINGS:
                cells = []
                for t in TARGETS:
                    kept, prec, held, some, none, _ = res[(rname, rule, t)]
                    cells += [f"{kept:.1%}", f"{prec:.2%}" if some else "–",
                              f"{held}/{some}" + (f" (none {none})" if none else "")]
                if rule == "plain":
                    cells += [f"{in_sample(rows, score, t):.1%}" for t in TARGETS]
                print(f"| {rname} | " + " | ".join(cells) + " |")
            print()
            print(f"Rule `{rule}`, paired with `neural` on the same splits: mean difference in the "
                  "share of the words kept on the other half (points), and the splits where the "
                  "ranking kept more / as many / fewer.\n")
            print("| ranking | " + " | ".join(f"P={t:.2f} diff. | more/same/fewer" for t in TARGETS) + " |")
            print("| --- |" + " ---: |" * (2 * len(TARGETS)))
            for rname, _ in RANKINGS[1:]:
                cells = []
                for t in TARGETS:
                    base, this = res[("neural", rule, t)][5], res[(rname, rule, t)][5]
                    d = [b - a for a, b in zip(base, this)]
                    cells += [f"{100 * statistics.mean(d):+.1f}",
                              "{}/{}/{}".format(sum(x > 1e-12 for x in d),
                                                sum(abs(x) <= 1e-12 for x in d),
                                                sum(x < -1e-12 for x in d))]
                print(f"| {rname} | " + " | ".join(cells) + " |")
            print()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
