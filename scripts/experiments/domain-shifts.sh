#!/usr/bin/env bash
# What corrections buy on two domain shifts (issue 42, docs/annotation.md#your-domain-what-500-to-4000-corrections-buy):
# en_atis (airline queries) for a model trained on en_ewt, and en_ewt's reviews for a model
# trained on its four other genres (scripts/genre-split.py). For each shift, each budget of
# corrected arcs and each way in (`annotated/`: the lowest-confidence arcs as partial trees;
# the workbench API: its queue, answered by scripts/simulate-annotator.py), one retraining cycle
# with the default settings: `retrain.base` the model's treebank, `retrain.heldout` its dev file
# (the gate's guard), 10% of the annotations held out (the gate's judge). Each candidate,
# promoted or not (`retrain --keep-rejected`), is scored on the domain's dev file and on the
# treebank's, with gold tags where the file has them (en_atis has no XPOS: retagged). Then a
# table: LAS, the share closed of the distance to a model trained on all of the domain's data
# (en_atis: every train tree as an annotation; reviews: the model trained on every genre), and
# the gate's decision.
#   usage: scripts/experiments/domain-shifts.sh [OUT]   (default /tmp/domain-shifts)
#   env: BUDGETS (0,500,1000,2000,4000; 0: a cycle on the treebank alone), STRATEGIES (partial-arcs,queue), SEEDS (training seeds of
#        the cycles at SEED_BUDGETS, besides the models' own: "2 3"), SEED_BUDGETS (0,2000),
#        KEYS (extra [retrain] lines for every cycle, e.g. "domain_features=true"), BIN.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-/tmp/domain-shifts}
ud=$(realpath "$root/../shared/data/ud")
bin=${BIN:-$root/target/release/spoolparse}
export SPOOLPARSE_BIN=$bin
budgets=${BUDGETS:-0,500,1000,2000,4000}
strategies=${STRATEGIES:-partial-arcs,queue}
mkdir -p "$out"
keys=()
for k in ${KEYS:-}; do keys+=(--retrain "$k"); done

# The models: en_ewt's as scripts/daemon.sh trains it, and the same recipe on four genres.
[ -f "$out/en_ewt.model" ] || "$bin" train --train "$ud/en_ewt/train.conllu.zst" --dev "$ud/en_ewt/dev.conllu.zst" \
  --output "$out/en_ewt.model" --tagger --tokenizer --jackknife 0 --epochs 8 --quantize i8 2> "$out/en_ewt.log"
[ -d "$out/genre/reviews" ] || python3 "$root/scripts/genre-split.py" reviews "$out/genre"
[ -f "$out/genre.model" ] || "$bin" train --train "$out/genre/base-train.conllu" --dev "$out/genre/base-dev.conllu" \
  --output "$out/genre.model" --tagger --jackknife 0 --epochs 8 --quantize i8 2> "$out/genre.log"

simulate() { # SHIFT NAME STRATEGIES BUDGETS [--retrain KEY=VALUE]...
  local shift=$1 name=$2 strats=$3 buds=$4; shift 4
  [ -n "$buds" ] || return 0
  if [ "$shift" = atis ]; then
    python3 "$root/scripts/simulate-annotator.py" "$out/en_ewt.model" --heldout "$ud/en_ewt/dev.conllu.zst" \
      --score "$ud/en_atis/dev.conllu.zst" --score "$ud/en_ewt/dev.conllu.zst" \
      --strategies "$strats" --budgets "$buds" --work "$out/runs/atis-$name" "$@" > "$out/runs/atis-$name.log" 2>&1
  else
    python3 "$root/scripts/simulate-annotator.py" "$out/genre.model" --domain "$out/genre/reviews" \
      --base "$out/genre/base-train.conllu" --heldout "$out/genre/base-dev.conllu" \
      --score "$out/genre/reviews/dev.conllu.zst" --score "$out/genre/base-dev.conllu" \
      --strategies "$strats" --budgets "$buds" --work "$out/runs/genre-$name" "$@" > "$out/runs/genre-$name.log" 2>&1
  fi
}
mkdir -p "$out/runs"
without_zero() { tr , '\n' <<< "$1" | grep -vx 0 | paste -sd, - || true; }
shift_runs() { # SHIFT: budget 0 (the treebank alone) once, then every budget and way in
  local shift=$1 seed
  simulate "$shift" grid partial-arcs 0 "${keys[@]}"
  simulate "$shift" grid "$strategies" "$(without_zero "$budgets")" "${keys[@]}"
  for seed in ${SEEDS-2 3}; do
    simulate "$shift" "seed$seed" partial-arcs 0 --retrain "seed=$seed" "${keys[@]}"
    simulate "$shift" "seed$seed" "$strategies" "$(without_zero "${SEED_BUDGETS:-0,2000}")" --retrain "seed=$seed" "${keys[@]}"
  done
}
# The two shifts side by side: a cycle trains on one core.
shift_runs atis & atis_job=$!
shift_runs genre
wait $atis_job
# The distances' far ends.
[ -f "$out/runs/atis-ceiling/results.jsonl" ] || simulate atis ceiling random 100000 --retrain annotation_heldout=0
"$bin" parse --model "$out/en_ewt.model" "$out/genre/reviews/dev.conllu.zst" --output "$out/reviews-ceiling.conllu" \
  --overwrite 2> /dev/null
"$bin" eval "$out/genre/reviews/dev.conllu.zst" "$out/reviews-ceiling.conllu" --json > "$out/reviews-ceiling.json"
python3 "$root/scripts/experiments/domain-table.py" "$out"
