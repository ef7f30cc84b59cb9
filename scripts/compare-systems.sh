#!/usr/bin/env bash
# Transition systems and pseudo-projective training on the shared treebanks (issue 15): for
# each treebank, system (arc-eager, arc-hybrid) and --pseudo-projective scheme (none, head,
# head+path), trains 15 epochs on gold tags with each seed of SEEDS, parses dev and scores it.
# Prints a Markdown table of dev UAS/LAS (all words) and the recall of non-projective gold
# arcs (head right; head and label right), each the mean over the seeds. Existing results in
# OUT_DIR are reused; delete them to measure again.
# LIFT_MIN=N passes --lift-min-count N (results named with .mN).
#   usage: [SYSTEMS=...] [SCHEMES=...] [SEEDS=...] [LIFT_MIN=N] scripts/compare-systems.sh [OUT_DIR] [TREEBANKS...]
#   (defaults: both systems, none head head+path, seed 1, runs/systems, all three treebanks)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud"
out=${1:-$root/runs/systems}
shift || true
treebanks=${*:-hu_szeged el_gdt en_ewt}
schemes=${SCHEMES:-none head head+path}
systems=${SYSTEMS:-arc-eager arc-hybrid}
seeds=${SEEDS:-1}
lift_min=${LIFT_MIN:-}
suffix=${lift_min:+.m$lift_min}
mkdir -p "$out"
# SPOOLPARSE=BINARY runs another build (e.g. a copy, while this tree is rebuilt).
sp=${SPOOLPARSE:-$root/target/release/spoolparse}
[ -n "${SPOOLPARSE:-}" ] || cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
for tb in $treebanks; do
  for sys in $systems; do
    for scheme in $schemes; do
      for seed in $seeds; do
        name="$tb.$sys.$scheme$suffix"
        [ "$seed" = 1 ] || name="$name.s$seed"
        [ -f "$out/$name.json" ] && continue
        "$sp" train --train "$ud/$tb/train.conllu.zst" --dev "$ud/$tb/dev.conllu.zst" --output "$out/$name.model" --overwrite \
          --system "$sys" --pseudo-projective "$scheme" ${lift_min:+--lift-min-count "$lift_min"} --epochs 15 \
          --seed "$seed" 2> "$out/$name.train.log"
        "$sp" parse --model "$out/$name.model" "$ud/$tb/dev.conllu.zst" --output "$out/$name.dev.conllu" --overwrite 2>/dev/null
        "$sp" eval "$ud/$tb/dev.conllu.zst" "$out/$name.dev.conllu" --json > "$out/$name.json"
        echo "$name done" >&2
      done
    done
  done
done
python3 - "$out" "$ud" "$suffix" "$treebanks" "$systems" "$schemes" "$seeds" <<'PY'
import json, os, subprocess, sys
out, ud, suffix, treebanks, systems, schemes, seeds = *sys.argv[1:4], *[a.split() for a in sys.argv[4:]]

def sentences(path):
    text = subprocess.run(["zstd", "-dcf", path], capture_output=True, check=True).stdout.decode()
    for block in text.split("\n\n"):
        words = [l.split("\t") for l in block.splitlines() if l and not l.startswith("#")]
        words = [w for w in words if w[0].isdigit()]
        if words:
            yield [(int(w[6]), w[7].split(":")[0]) for w in words]

def non_projective(heads):
    """Indices (0-based words) of the non-projective arcs: some word between head and
    dependent is not dominated by the head."""
    def dominated(h, w):
        while w != 0:
            if w == h:
                return True
            w = heads[w - 1]
        return h == 0
    arcs = []
    for d, h in enumerate(heads, 1):
        lo, hi = sorted((h, d))
        if any(not dominated(h, w) for w in range(lo + 1, hi)):
            arcs.append(d - 1)
    return arcs

print("| treebank | system | pseudo-projective | UAS | LAS | non-proj. arcs | recall (head) | recall (head+label) | LAS per seed |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
for tb in treebanks:
    gold = list(sentences(os.path.join(ud, tb, "dev.conllu.zst")))
    for sys_ in systems:
        for scheme in schemes:
            runs = []
            for seed in seeds:
                name = f"{tb}.{sys_}.{scheme}{suffix}" + ("" if seed == "1" else f".s{seed}")
                if not os.path.exists(os.path.join(out, name + ".json")):
                    continue
                s = json.load(open(os.path.join(out, name + ".json")))
                pred = list(sentences(os.path.join(out, name + ".dev.conllu")))
                total = head = labelled = 0
                for g, p in zip(gold, pred):
                    for i in non_projective([h for h, _ in g]):
                        total += 1
                        head += p[i][0] == g[i][0]
                        labelled += p[i] == g[i]
                runs.append((s["uas"], s["las"], total, 100 * head / max(total, 1), 100 * labelled / max(total, 1)))
            if not runs:
                continue
            mean = [sum(r[k] for r in runs) / len(runs) for k in range(5)]
            las = ", ".join(f"{r[1]:.2f}" for r in runs) if len(runs) > 1 else "1"
            print(f"| {tb} | {sys_} | {scheme} | {mean[0]:.2f} | {mean[1]:.2f} | {runs[0][2]} | "
                  f"{mean[3]:.1f} | {mean[4]:.1f} | {las if len(runs) > 1 else 1} |")
PY
