#!/usr/bin/env python3
"""The annotation loop on en_ewt, through the daemon, with a simulated annotator.

An initial model is trained on 25% of en_ewt train (every fourth sentence); the other 75% is
the unlabelled corpus (HEAD and DEPREL blanked). For each selection strategy, a daemon of its
own (own spool, own models directory, retraining every few seconds) parses the corpus; the
script picks BUDGET annotated arcs from the output by the strategy, replaces them by their gold
arcs (the simulated annotator), drops the file into annotated/, and waits for the daemon's
retraining cycle and its report. Five rounds per strategy. A full-sentence annotation has one
arc per word, so words and arcs are the same count there; partial strategies annotate only some
words of a sentence (the others stay `_`), and the table counts both.

Strategies:
  random        whole sentences, at random
  lowest        whole sentences, lowest `# confidence` first
  partial-arcs  the lowest-confidence arcs of the whole corpus, wherever they are
  partial-flag  the arcs marked LowConf=Yes, sentences by lowest confidence first

Dev LAS is the candidate's LAS on en_ewt dev (retrain.heldout, which also calibrates and gates),
over all words, as `spoolparse retrain` reports it, whether or not it was promoted.

usage: scripts/annotation_loop.py [--rounds 5] [--budget 5000] [--strategies a,b] [--work DIR]
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UD = os.path.join(ROOT, "..", "shared", "data", "ud", "en_ewt")
SP = os.path.join(ROOT, "target", "release", "spoolparse")


def read_conllu(path):
    """Sentences as (comments, token lines) from a .conllu or .conllu.zst file."""
    if path.endswith(".zst"):
        text = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode()
    else:
        text = open(path, encoding="utf-8").read()
    out, comments, lines = [], [], []
    for line in text.split("\n"):
        if not line:
            if lines:
                out.append((comments, lines))
            comments, lines = [], []
        elif line.startswith("#"):
            comments.append(line)
        else:
            lines.append(line.split("\t"))
    if lines:
        out.append((comments, lines))
    return out


def write_conllu(path, sents):
    with open(path, "w", encoding="utf-8") as f:
        for comments, lines in sents:
            for c in comments:
                f.write(c + "\n")
            for cols in lines:
                f.write("\t".join(cols) + "\n")
            f.write("\n")


def sent_id(comments):
    for c in comments:
        if c.startswith("# sent_id"):
            return c.split("=", 1)[1].strip()
    return None


def comment(comments, key):
    for c in comments:
        if c.startswith("# " + key + " ="):
            return c.split("=", 1)[1].strip()
    return None


def words(lines):
    return [cols for cols in lines if cols[0].isdigit()]


def misc(cols, key):
    for entry in cols[9].split("|"):
        if entry.startswith(key + "="):
            return entry.split("=", 1)[1]
    return None


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


class Daemon:
    """One strategy's daemon: its own spool, outputs, models and annotations."""

    def __init__(self, work, name, model, base, heldout):
        self.dir = os.path.join(work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.spool = os.path.join(self.dir, "spool")
        self.out = os.path.join(self.dir, "out")
        self.models = os.path.join(self.spool, "models")
        self.annotated = os.path.join(self.spool, "annotated")
        self.config = os.path.join(self.dir, "spoolparse.toml")
        with open(self.config, "w") as f:
            f.write(f'''[paths]
spool = "{self.spool}"
output = "{self.out}"
model = "{model}"
[parse]
threads = 2
[watch]
rescan_seconds = 1
[retrain]
enabled = true
every = "2s"
min_new_sentences = 1
base = ["{base}"]
heldout = "{heldout}"
keep_models = 3
''')
        self.log = open(os.path.join(self.dir, "daemon.log"), "w")
        self.proc = subprocess.Popen([SP, "daemon", "--config", self.config], stderr=self.log)
        self.round = 0

    def parse(self, corpus):
        """Drops the corpus in and returns its parsed sentences (accepted and lowconf)."""
        self.round += 1
        name = f"corpus-{self.round}.conllu"
        tmp = os.path.join(self.spool, "incoming", "." + name)
        os.makedirs(os.path.dirname(tmp), exist_ok=True)
        shutil.copy(corpus, tmp)
        os.rename(tmp, os.path.join(self.spool, "incoming", name))
        done = os.path.join(self.spool, "done", name)
        while not os.path.exists(done):
            self.check()
            time.sleep(0.2)
        parsed = []
        for d in ("accepted", "lowconf"):
            parsed += read_conllu(os.path.join(self.out, d, name + ".zst"))
        return parsed

    def annotate(self, sents):
        """Drops annotations in and waits for the retraining cycle's report."""
        before = self.reports()
        name = f"round-{self.round}.conllu"
        tmp = os.path.join(self.annotated, "." + name)
        os.makedirs(self.annotated, exist_ok=True)
        write_conllu(tmp, sents)
        os.rename(tmp, os.path.join(self.annotated, name))
        while True:
            self.check()
            new = sorted(set(self.reports()) - set(before))
            if new:
                # Let the promotion (after the report) land before the next round parses.
                time.sleep(2)
                return json.load(open(os.path.join(self.models, new[-1])))
            time.sleep(1)

    def reports(self):
        if not os.path.isdir(self.models):
            return []
        return [f for f in os.listdir(self.models) if f.startswith("retrained-") and f.endswith(".json")]

    def check(self):
        if self.proc.poll() is not None:
            sys.exit(f"the daemon of {self.dir} died; see {self.log.name}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()


def select(strategy, parsed, gold, taken, budget, rng):
    """Annotations for one round: (sentences to drop in, words touched, arcs annotated)."""
    pool = [(c, l) for c, l in parsed if sent_id(c) not in taken and sent_id(c) in gold]
    chosen = {}  # sent_id -> set of word indices (1-based) whose arcs are annotated
    arcs = 0
    if strategy in ("random", "lowest"):
        if strategy == "random":
            rng.shuffle(pool)
        else:
            pool.sort(key=lambda s: float(comment(s[0], "confidence") or 0))
        for c, l in pool:
            if arcs >= budget:
                break
            n = len(words(l))
            chosen[sent_id(c)] = set(range(1, n + 1))
            arcs += n
    elif strategy == "partial-arcs":
        candidates = []
        for c, l in pool:
            for cols in words(l):
                conf = misc(cols, "Conf")
                if conf is not None:
                    candidates.append((float(conf), sent_id(c), int(cols[0])))
        candidates.sort()
        for conf, sid, w in candidates[:budget]:
            chosen.setdefault(sid, set()).add(w)
            arcs += 1
    elif strategy == "partial-flag":
        pool.sort(key=lambda s: float(comment(s[0], "confidence") or 0))
        for c, l in pool:
            flagged = [int(cols[0]) for cols in words(l) if misc(cols, "LowConf") == "Yes"]
            if not flagged:
                continue
            if arcs >= budget:
                break
            chosen[sent_id(c)] = set(flagged[: budget - arcs])
            arcs += len(chosen[sent_id(c)])
    else:
        sys.exit(f"unknown strategy {strategy}")
    out = []
    touched = 0
    by_id = {sent_id(c): (c, l) for c, l in pool}
    for sid, ws in chosen.items():
        comments, lines = by_id[sid]
        gold_words = {cols[0]: cols for cols in words(gold[sid][1])}
        new_lines = []
        for cols in lines:
            cols = list(cols)
            if cols[0].isdigit():
                if int(cols[0]) in ws:
                    cols[6], cols[7] = gold_words[cols[0]][6], gold_words[cols[0]][7]
                    # Reviewed: without the parser's marks (a word that keeps them is stored unannotated).
                    kept = [e for e in cols[9].split("|") if e.split("=", 1)[0] not in ("Conf", "LowConf")]
                    cols[9] = "|".join(kept) or "_"
                else:
                    cols[6], cols[7] = "_", "_"
            new_lines.append(cols)
        keep = [c for c in comments if c.startswith("# sent_id") or c.startswith("# text")]
        out.append((keep, new_lines))
        touched += len(words(lines))
        taken.add(sid)
    return out, touched, arcs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=5000, help="annotated arcs per round")
    ap.add_argument("--strategies", default="random,lowest,partial-arcs,partial-flag")
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "loop"))
    ap.add_argument("--epochs", type=int, default=8)
    args = ap.parse_args()
    if not os.path.isdir(UD):
        sys.exit(f"{UD} is missing: the loop needs en_ewt")
    run(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    os.makedirs(args.work, exist_ok=True)
    train = read_conllu(os.path.join(UD, "train.conllu.zst"))
    init = [s for i, s in enumerate(train) if i % 4 == 0]
    rest = [s for i, s in enumerate(train) if i % 4 != 0]
    gold = {sent_id(c): (c, l) for c, l in rest}
    base = os.path.join(args.work, "init.conllu")
    write_conllu(base, init)
    blank = []
    for c, l in rest:
        lines = []
        for cols in l:
            cols = list(cols)
            if cols[0].isdigit():
                cols[6], cols[7], cols[8] = "_", "_", "_"
            lines.append(cols)
        blank.append(([x for x in c if x.startswith("# sent_id") or x.startswith("# text")], lines))
    corpus = os.path.join(args.work, "corpus.conllu")
    write_conllu(corpus, blank)
    dev = os.path.join(UD, "dev.conllu.zst")
    model = os.path.join(args.work, "init.model")
    if not os.path.exists(model):
        print(f"training the initial model on {len(init)} sentences ...", file=sys.stderr)
        run([SP, "train", "--train", base, "--dev", dev, "--output", model, "--epochs", str(args.epochs),
             "--quantize", "i8"])
    rows = []
    for strategy in args.strategies.split(","):
        d = Daemon(args.work, strategy, model, base, dev)
        rng = random.Random(1)
        taken = set()
        total_words = total_arcs = 0
        try:
            for r in range(1, args.rounds + 1):
                parsed = d.parse(corpus)
                sents, touched, arcs = select(strategy, parsed, gold, taken, args.budget, rng)
                total_words += touched
                total_arcs += arcs
                report = d.annotate(sents)
                cand = report.get("candidate") or {}
                row = {
                    "strategy": strategy, "round": r, "sentences": len(taken), "words": total_words,
                    "arcs": total_arcs, "dev_las": cand.get("heldout_las"),
                    "serving_las_before": report["current"]["heldout_las"], "decision": report.get("decision"),
                    "train_seconds": report.get("train_seconds"),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
        finally:
            d.stop()
    print("\n| strategy | round | sentences | words in them | annotated arcs | dev LAS | decision |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['strategy']} | {r['round']} | {r['sentences']} | {r['words']} | {r['arcs']} | "
              f"{r['dev_las']:.2f} | {r['decision']} |")
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
