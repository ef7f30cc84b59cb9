#!/usr/bin/env bash
# Learners on the shared treebanks (issue 16): for each treebank, learner and transition
# system, trains EPOCHS epochs on gold tags with the default model options (i8, size bound,
# pseudo-projective head), then measures what a user gets from the stored model: dev UAS/LAS
# (all words, `spoolparse eval`), training wall time, the epoch kept (best dev LAS), non-zero
# weights, model file size, whole-process `parse --threads 1` words/s on dev ×8 (median of
# ROUNDS), and the arc ECE of the calibrated confidences (2-fold cross-fitted on dev, as
# training records it). Prints a Markdown table. Existing results in OUT_DIR are reused;
# delete them to measure again.
#   usage: [LEARNERS=...] [SYSTEMS=...] [EPOCHS=15] [ROUNDS=3] [EXTRA="--min-feature-count 5"]
#          [TAG=name] [REMEASURE=1] scripts/compare-learners.sh [OUT_DIR] [TREEBANKS...]
#   REMEASURE=1 measures the parse speed of existing results again (on a quiet machine).
#   (defaults: perceptron logistic cw cost-sensitive pa, arc-eager, runs/learners, all three)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud"
[ -d "$ud" ] || { echo "compare-learners: $ud not found (the shared treebanks)" >&2; exit 1; }
out=${1:-$root/runs/learners}
shift || true
treebanks=${*:-hu_szeged el_gdt en_ewt}
learners=${LEARNERS:-perceptron logistic cw cost-sensitive pa}
systems=${SYSTEMS:-arc-eager}
epochs=${EPOCHS:-15}
rounds=${ROUNDS:-3}
extra=${EXTRA:-}
tag=${TAG:+.$TAG}
mkdir -p "$out"
# SPOOLPARSE=BINARY runs another build (e.g. a copy, while this tree is rebuilt).
sp=${SPOOLPARSE:-$root/target/release/spoolparse}
[ -n "${SPOOLPARSE:-}" ] || cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# speed MODEL INPUT: median whole-process `parse --threads 1` words/s over ROUNDS runs.
speed() {
  local words s e speeds=()
  words=$(grep -c $'^[0-9]*\t' "$2")
  for _ in $(seq "$rounds"); do
    s=$(date +%s.%N)
    "$sp" parse --model "$1" "$2" --threads 1 --output /dev/null 2>/dev/null
    e=$(date +%s.%N)
    speeds+=("$(python3 -c "print($words / ($e - $s))")")
  done
  python3 -c 'import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))' "${speeds[@]}"
}
for tb in $treebanks; do
  # The speed input: dev ×8, uncompressed, read once beforehand so the page cache holds it.
  for _ in 1 2 3 4 5 6 7 8; do zstd -dcf "$ud/$tb/dev.conllu.zst"; done > "$tmp/$tb.x8.conllu"
  for sys in $systems; do
    for learner in $learners; do
      name="$tb.$sys.$learner$tag"
      if [ -f "$out/$name.json" ]; then
        [ -n "${REMEASURE:-}" ] || continue
        # Parse speed again (e.g. on a quiet machine), keeping everything else.
        python3 - "$out/$name.json" "$(speed "$out/$name.model" "$tmp/$tb.x8.conllu")" <<'PY'
import json, sys
path, speed = sys.argv[1:]
r = json.load(open(path))
r["words_per_second"] = float(speed)
json.dump(r, open(path, "w"))
PY
        echo "$name: speed measured again" >&2
        continue
      fi
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$sp" train --train "$ud/$tb/train.conllu.zst" --dev "$ud/$tb/dev.conllu.zst" --output "$out/$name.model" --overwrite \
        --system "$sys" --learner "$learner" --epochs "$epochs" $extra 2> "$out/$name.train.log"
      end=$(date +%s.%N)
      "$sp" parse --model "$out/$name.model" "$ud/$tb/dev.conllu.zst" --output "$out/$name.dev.conllu" --overwrite 2>/dev/null
      "$sp" eval "$ud/$tb/dev.conllu.zst" "$out/$name.dev.conllu" --json > "$tmp/eval.json"
      "$sp" inspect "$out/$name.model" > "$tmp/inspect.txt"
      python3 - "$tmp/eval.json" "$tmp/inspect.txt" "$out/$name.train.log" "$out/$name.model" \
        "$(python3 -c "print($end - $start)")" "$(speed "$out/$name.model" "$tmp/$tb.x8.conllu")" \
        > "$out/$name.json" <<'PY'
import json, os, re, sys
ev, inspect, log, model, seconds, speed = sys.argv[1:]
ev = json.load(open(ev))
info = json.loads(re.search(r"^training\s+(\{.*\})$", open(inspect).read(), re.M).group(1))
nonzero = re.search(r"(\d+) non-zero weights", open(log).read()).group(1)
print(json.dumps({
    "uas": ev["uas"], "las": ev["las"], "train_seconds": float(seconds),
    "best_epoch": info["best_epoch"], "epochs": info["epochs"], "nonzero": int(nonzero),
    "model_bytes": os.path.getsize(model), "words_per_second": float(speed),
    "arc_ece_calibrated": info["dev_arc_ece_crossfit"], "arc_ece_raw": info["dev_arc_ece_raw"],
}))
PY
      echo "$name done" >&2
    done
  done
done
python3 - "$out" "$tag" "$treebanks" "$systems" "$learners" <<'PY'
import json, os, sys
out, tag, treebanks, systems, learners = sys.argv[1], sys.argv[2], *[a.split() for a in sys.argv[3:]]
print("| treebank | system | learner | dev UAS | dev LAS | train s | best epoch | non-zero weights | model MB | parse words/s (1 thread) | arc ECE (calibrated) |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for tb in treebanks:
    for sys_ in systems:
        for learner in learners:
            path = os.path.join(out, f"{tb}.{sys_}.{learner}{tag}.json")
            if not os.path.exists(path):
                continue
            r = json.load(open(path))
            print(f"| {tb} | {sys_} | {learner} | {r['uas']:.2f} | {r['las']:.2f} | {r['train_seconds']:.0f} | "
                  f"{r['best_epoch']}/{r['epochs']} | {r['nonzero']:,} | {r['model_bytes'] / 1e6:.1f} | "
                  f"{r['words_per_second']:,.0f} | {r['arc_ece_calibrated']:.4f} |")
PY
