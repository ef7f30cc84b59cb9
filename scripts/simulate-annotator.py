#!/usr/bin/env python3
"""A simulated annotator against the workbench, and what its answers buy (issue 29).

MODEL (trained on en_ewt, with its tagger) parses the training part of another domain
(default: en_atis train, airline queries; its missing XPOS makes `parse` retag it) as the
daemon would: sentences below --min-confidence go to a lowconf file. Then, for each budget of
answered arcs and each way of spending it, the annotations go into `annotated/` of a run of
their own and one retraining cycle runs (`spoolparse retrain --force`, today's defaults, with
en_ewt train as `retrain.base` and the domain's dev file as `retrain.heldout`, so the report's
held-out LAS is the domain's dev LAS, before and after, promoted or not; --heldout names
another, e.g. en_ewt dev, so that the calibration is not fitted on the file scored; each row
also has the cycle's wall time and peak RSS; --score files are scored with the candidate whether
the gate promoted it or not). Ways of spending it:

  queue         `spoolparse annotate` serves the lowconf file; the annotator takes tasks with
                GET /api/next and answers every word flagged to check with its gold arc
                (POST /api/answer), until the budget of answered arcs
  random        whole gold sentences of the corpus, at random
  lowest        whole gold sentences, lowest `# confidence` first
  partial-arcs  the corpus's lowest-confidence arcs, wherever they are (no queue smarts)

Also printed, from the queue runs: the share of wrong arcs among the first N arcs asked,
against every arc of the lowconf sentences ordered by confidence alone, and the share of the
pool's errors within the first 30% of its arcs (with the bound no ranking can pass).

The queue's annotator takes a person's time where the workbench asks for it: an answer that
changes no arc is sent a little over a second per arc after the task was leased (the
workbench holds back, as a rubber stamp, arcs it rated likely wrong confirmed faster in an
answer that corrects none: src/workbench/review.rs); --instant answers at once. Each row says
how many answers were held back. Issue 52's item 4: before 2026-12-07 the rule held back an
answer that corrected arcs too, and this annotator answered at once: on en_atis 138 of its
667 answers (414 of the 2,000 arcs) were held back and never trained on.

With --fix-tags (issue 30), the queue's annotator also fixes tags: every word of a task whose
shown UPOS is not the gold one gets the gold UPOS in its answer (with its arc when it is one
asked, alone otherwise), as a person who sees a wrong tag would fix it; those fixes are counted
apart from the arc budget, and the cycles run with `retrain_tagger = true` (runs and results
are named `queue+tags`).

usage: scripts/simulate-annotator.py MODEL [--budgets 1000,2000,4000]
         [--strategies queue,random,lowest,partial-arcs] [--work DIR] [--retrain KEY=VALUE]...
         [--fix-tags] [--instant] [--score GOLD]...
       scripts/simulate-annotator.py MODEL --precision-only [--budgets 7000]
         (the queue alone, answered until the budget or its end, no retraining)
Results are appended to WORK/results.jsonl as they come (a run already there is not redone).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from annotation_loop import misc, read_conllu, select, sent_id, words, write_conllu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UD = os.path.join(ROOT, "..", "shared", "data", "ud")
SP = os.environ.get("SPOOLPARSE_BIN", os.path.join(ROOT, "target", "release", "spoolparse"))


def wrong(cols, gold_cols):
    return (cols[6], cols[7]) != (gold_cols[6], gold_cols[7])


def config(path, run, model, base, heldout, settings):
    with open(path, "w") as f:
        f.write(f'[paths]\nspool = "{run}/spool"\noutput = "{run}/out"\nmodel = "{model}"\n'
                f'[retrain]\nbase = ["{base}"]\nheldout = "{heldout}"\n' + "".join(s + "\n" for s in settings))


def call(url, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    try:
        headers = {} if data is None else {"Content-Type": "application/json"}
        reply = urllib.request.urlopen(urllib.request.Request(url + path, data=data, headers=headers))
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
    return reply.status, (json.load(reply) if reply.status == 200 else None)


# A person's time per arc confirmed unchanged: over the workbench's 1 s (review.rs).
CONFIRM_SECONDS = 1.05


def queue_answers(run, model, lowconf, gold, budget, fix_tags=False, instant=False):
    """Answers tasks through the API until `budget` arcs; returns the asked arcs' wrongness,
    the count of arcs answered, the count of tags fixed (with `fix_tags`: the gold UPOS of
    every word shown with another, sent with the answer; not counted in the budget) and the
    count of answers the workbench held back. An answer that changes no arc waits
    CONFIRM_SECONDS an arc from the lease, unless `instant`.

    A gold label is answered as the page offers it: one of the model's labels, or a UD relation
    the model has not seen (`obl:tmod` through an en_ewt model; GET /api/labels' `relations`);
    any other is answered as the head alone. Gold arcs that no projective tree holds together
    are answered as many as can be, the first ones first, as the page would refuse the rest."""
    cfg = os.path.join(run, "annotate.toml")
    with open(cfg, "w") as f:
        f.write(f'[paths]\nspool = "{run}/spool"\noutput = "{run}/out"\nmodel = "{model}"\n')
    os.makedirs(os.path.join(run, "out", "lowconf"), exist_ok=True)
    shutil.copy(lowconf, os.path.join(run, "out", "lowconf", "corpus.conllu"))
    log_path = os.path.join(run, "annotate.log")
    with open(log_path, "w") as log:  # a file, not a pipe: a full pipe would stop the server
        server = subprocess.Popen([SP, "annotate", "--config", cfg, "--listen", "127.0.0.1:0"], stderr=log)
    asked = []
    tag_fixes = held = 0
    try:
        url = None
        while url is None:
            time.sleep(0.1)
            if server.poll() is not None:
                sys.exit(f"spoolparse annotate stopped: see {log_path}")
            url = next((line.split("workbench on ")[1].strip().rstrip("/")
                        for line in open(log_path) if "workbench on http://" in line), None)
        offered = call(url, "/api/labels")[1]
        labels = set(offered["labels"]) | set(offered["relations"])
        answered = 0
        while call(url, "/api/stats")[1]["queued"] < 1:
            time.sleep(0.2)
        time.sleep(2)  # the scan of the one file is complete once `queued` stops moving
        while answered < budget:
            status, task = call(url, "/api/next")
            leased = time.monotonic()
            if status == 204:
                break
            g = {cols[0]: cols for cols in words(gold[task["sent_id"]][1])}
            arcs = []
            for w in task["words"]:
                if w["check"]:
                    gc = g[str(w["id"])]
                    asked.append((str(w["head"]), w["deprel"]) != (gc[6], gc[7]))
                    arcs.append({"id": w["id"], "head": int(gc[6]), "deprel": gc[7] if gc[7] in labels else None})
            # Tags shown wrong, fixed to gold: on the word's arc if it is answered, alone otherwise.
            wrong_tags = {w["id"]: g[str(w["id"])][3] for w in task["words"]
                          if fix_tags and w["upos"] != g[str(w["id"])][3]}
            shown = {w["id"]: (w["head"], w["deprel"]) for w in task["words"]}
            if arcs and not instant and all(shown[a["id"]] == (a["head"], a["deprel"]) for a in arcs):
                time.sleep(max(0.0, CONFIRM_SECONDS * len(arcs) - (time.monotonic() - leased)))
            while arcs:
                ids = {a["id"] for a in arcs}
                body = [dict(a, upos=wrong_tags[a["id"]]) if a["id"] in wrong_tags else a for a in arcs]
                body += [{"id": i, "upos": u} for i, u in wrong_tags.items() if i not in ids]
                status, reply = call(url, "/api/answer", {"task": task["task"], "arcs": body, "whole": False})
                if status == 200:
                    answered += len(arcs)
                    tag_fixes += reply["tags"]
                    held += bool(reply.get("held_back"))
                    break
                if status != 422:
                    sys.exit(f"POST /api/answer: {status} {reply}")
                arcs.pop()
            else:
                call(url, "/api/skip", {"task": task["task"]})
    finally:
        server.terminate()
        server.wait()
    return asked, answered, tag_fixes, held


def retrain(run, cfg):
    """One cycle's report, with the whole process's peak RSS (MiB) and wall seconds added."""
    usage = os.path.join(run, "retrain.time")
    out = subprocess.run(["/usr/bin/time", "-f", "%M %e", "-o", usage, "nice", "-n", "5", SP, "retrain",
                          "--config", cfg, "--force", "--json", "--keep-rejected", os.path.join(run, "rejected")],
                         capture_output=True, text=True)
    if out.returncode not in (0, 3):
        sys.exit(f"retrain failed in {run}:\n{out.stderr}")
    report = json.loads(out.stdout)
    kib, wall = open(usage).read().split()[-2:]
    report["peak_rss_mib"], report["wall_seconds"] = round(int(kib) / 1024), float(wall)
    return report


def score(model, gold, out):
    """LAS, UPOS and arc ECE of `model` on the gold file (parsed as the daemon would, retagged)."""
    subprocess.run([SP, "parse", "--model", model, gold, "--output", out, "--overwrite"], check=True,
                   capture_output=True)
    e = json.loads(subprocess.run([SP, "eval", gold, out, "--json", "--calibration"], check=True,
                                  capture_output=True, text=True).stdout)
    return {"las": e["las"], "upos": e["upos"], "ece": e["calibration"]["arcs"]["ece"]}


def precision(asked, pool, gold):
    """Rows for the queue-precision table."""
    arcs = []
    for c, l in pool:
        g = {cols[0]: cols for cols in words(gold[sent_id(c)][1])}
        arcs += [(float(misc(cols, "Conf") or 0), wrong(cols, g[cols[0]])) for cols in words(l)]
    arcs.sort(key=lambda a: a[0])
    plain = [w for _, w in arcs]
    errors, cut = sum(plain), int(0.3 * len(plain))
    # The queue asks a few words a sentence: if it ends before 30% of the pool's arcs, the
    # rankings are compared at its end.
    k = min(cut, len(asked))
    print(f"\npool: {len(pool)} low-confidence sentences, {len(plain)} arcs, {errors} wrong "
          f"({100 * errors / len(plain):.1f}%); the queue asked {len(asked)} arcs")
    print(f"| ranking | wrong in first 500 | 1,000 | 2,000 | 4,000 | the pool's errors in its first {k} arcs "
          f"({100 * k / len(plain):.0f}%; at most {100 * min(k, errors) / errors:.1f}%) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, order in [("workbench queue", asked), ("plain confidence, every arc", plain)]:
        shares = [f"{100 * sum(order[:n]) / n:.1f}%" if len(order) >= n else "-" for n in (500, 1000, 2000, 4000)]
        print(f"| {name} | {' | '.join(shares)} | {100 * sum(order[:k]) / errors:.1f}% |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--domain", default=os.path.join(UD, "en_atis"))
    ap.add_argument("--base", default=os.path.join(UD, "en_ewt", "train.conllu.zst"))
    ap.add_argument("--heldout", metavar="GOLD", help="the cycles' `retrain.heldout` (default: the domain's "
                    "dev file, which the calibration is then fitted on: give another to score ECE there)")
    ap.add_argument("--budgets", default="1000,2000,4000")
    ap.add_argument("--strategies", default="queue,random,lowest,partial-arcs")
    ap.add_argument("--min-confidence", default="0.8")
    ap.add_argument("--retrain", action="append", default=[], metavar="KEY=VALUE",
                    help="a [retrain] setting of the cycles (TOML), e.g. annotation_weight=1; repeatable")
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "simulate-annotator"))
    ap.add_argument("--precision-only", action="store_true")
    ap.add_argument("--fix-tags", action="store_true",
                    help="the queue's annotator also sends the gold UPOS of every word shown with a wrong one; "
                         "cycles run with retrain_tagger = true")
    ap.add_argument("--score", action="append", default=[], metavar="GOLD",
                    help="also score the promoted candidate (and the model, once) on this gold file: LAS, UPOS, "
                         "arc ECE; repeatable (e.g. the domain's dev and en_ewt dev)")
    ap.add_argument("--instant", action="store_true",
                    help="the queue's annotator answers at once, also where the workbench holds back a confirmation "
                         "that fast as a rubber stamp (the held answers are counted)")
    ap.add_argument("--strip-xpos", action="store_true",
                    help="files dropped into annotated/ have XPOS `_` (as from a tool that writes UPOS only)")
    args = ap.parse_args()
    if args.fix_tags and not any(r.startswith("retrain_tagger") for r in args.retrain):
        args.retrain.append("retrain_tagger = true")
    model = os.path.abspath(args.model)
    train, dev = os.path.join(args.domain, "train.conllu.zst"), os.path.join(args.domain, "dev.conllu.zst")
    if not os.path.exists(train):
        sys.exit(f"{train} is missing")
    os.makedirs(args.work, exist_ok=True)
    accepted, lowconf = os.path.join(args.work, "accepted.conllu"), os.path.join(args.work, "lowconf.conllu")
    subprocess.run([SP, "parse", "--model", model, train, "--output", accepted, "--rejected", lowconf,
                    "--min-confidence", args.min_confidence, "--overwrite"], check=True)
    gold = {sent_id(c): (c, l) for c, l in read_conllu(train)}
    pool = read_conllu(lowconf)
    parsed = read_conllu(accepted) + pool
    if args.precision_only:
        run = os.path.join(args.work, "precision")
        shutil.rmtree(run, ignore_errors=True)
        os.makedirs(os.path.join(run, "spool", "annotated"))
        asked, _, _, _ = queue_answers(run, model, lowconf, gold, max(int(b) for b in args.budgets.split(",")),
                                      instant=True)
        precision(asked, pool, gold)
        return
    results_path = os.path.join(args.work, "results.jsonl")
    done = {}
    if os.path.exists(results_path):
        for line in open(results_path):
            r = json.loads(line)
            done[(r["strategy"], r["budget"])] = r
    asked_max = []
    for g in args.score:
        base_score = score(model, g, os.path.join(args.work, "scored.conllu"))
        print(f"the model before any cycle on {g}: {json.dumps(base_score)}", flush=True)
    for budget in [int(b) for b in args.budgets.split(",")]:
        for strategy in args.strategies.split(","):
            name = strategy + ("+tags" if args.fix_tags and strategy == "queue" else "")
            if (name, budget) in done:
                continue
            run = os.path.join(args.work, f"{name}-{budget}")
            shutil.rmtree(run, ignore_errors=True)
            os.makedirs(os.path.join(run, "spool", "annotated"))
            cfg = os.path.join(run, "spoolparse.toml")
            config(cfg, run, model, os.path.abspath(args.base), os.path.abspath(args.heldout or dev), args.retrain)
            tag_fixes = held = 0
            if strategy == "queue":
                asked, arcs, tag_fixes, held = queue_answers(run, model, lowconf, gold, budget, args.fix_tags,
                                                             args.instant)
                asked_max = max(asked_max, asked, key=len)
            else:
                sents, _, arcs = select(strategy, parsed, gold, set(), budget, random.Random(1))
                if args.strip_xpos:
                    sents = [(c, [cols[:4] + ["_"] + cols[5:] if len(cols) == 10 else cols for cols in l])
                             for c, l in sents]
                tmp = os.path.join(run, "spool", "annotated", ".answers.conllu")
                write_conllu(tmp, sents)
                os.rename(tmp, os.path.join(run, "spool", "annotated", "answers.conllu"))
            report = retrain(run, cfg)
            row = {"strategy": name, "budget": budget, "arcs": arcs, "tag_fixes": tag_fixes, "held_answers": held,
                   "before": report["current"]["heldout_las"],
                   "after": (report.get("candidate") or {}).get("heldout_las"),
                   "decision": report.get("decision"), "train_seconds": report.get("train_seconds"),
                   "wall_seconds": report["wall_seconds"], "peak_rss_mib": report["peak_rss_mib"],
                   "heldout_upos": [report.get("heldout_upos_serving"), report.get("heldout_upos_candidate")],
                   "annotations_las": [report["current"]["annotations_las"],
                                       (report.get("candidate") or {}).get("annotations_las")],
                   "gate": report.get("gate"), "reasons": report.get("reasons"), "settings": args.retrain}
            # A rejected candidate is scored too (kept by --keep-rejected): what the gate refused.
            candidate = os.path.join(run, "spool", "models", "current")
            if report.get("decision") == "rejected":
                candidate = os.path.join(run, "rejected", report["candidate"]["model"])
            if report.get("decision") in ("promoted", "rejected"):
                for g in args.score:
                    row[os.path.basename(os.path.dirname(g)) + ":" + os.path.basename(g)] = \
                        score(candidate, g, os.path.join(run, "scored.conllu"))
            print(json.dumps(row), flush=True)
            done[(strategy, budget)] = row
            with open(results_path, "a") as f:
                f.write(json.dumps(row) + "\n")
    print(f"\nLAS on {dev} (before: {next(iter(done.values()))['before']:.2f}), one retraining cycle:")
    print("| budget (arcs) | " + " | ".join(args.strategies.split(",")) + " |")
    print("| ---: |" + " ---: |" * len(args.strategies.split(",")))
    for budget in [int(b) for b in args.budgets.split(",")]:
        cells = []
        for s in args.strategies.split(","):
            r = done.get((s + ("+tags" if args.fix_tags and s == "queue" else ""), budget))
            cells.append("-" if not r or r["after"] is None else
                         f"{r['after']:.2f} ({r['after'] - r['before']:+.2f}, {r['decision']})")
        print(f"| {budget} | " + " | ".join(cells) + " |")
    if asked_max:
        precision(asked_max, pool, gold)


if __name__ == "__main__":
    main()
