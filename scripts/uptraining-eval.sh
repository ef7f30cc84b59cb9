#!/usr/bin/env bash
# Uptraining measured (issue 53, docs/annotation.md#uptraining-the-fast-tier-from-your-own-text):
# a fast (linear) model before and after `train --teacher`, beside its teacher (a neural model
# trained on the same treebank), from raw text, with every column of the official evaluator.
#
#   scripts/uptraining-eval.sh [DOMAIN...]
#
# SHIFT says which domain shift (default atis):
# - `atis`: models of en_ewt, scored on en_atis dev (one sentence a line). The unlabeled text of
#   DOMAIN `atis`: en_atis train's sentences, one a line (48,655 words); `atis10k`: its first
#   10,000 words; `ewt`: en_ewt dev's own raw text. Default DOMAINs: atis ewt.
# - `reviews`: the en_ewt genre shift (scripts/genre-split.py): models of the four other
#   genres, scored on the reviews' dev text. DOMAIN `reviews`: the reviews' train text as
#   paragraphs; `reviews10k`: its first paragraphs up to 10,000 words; `base`: the four genres'
#   own dev text. Default DOMAINs: reviews base.
# Every model is also scored from raw text on the base treebank's dev (what uptraining costs,
# or gains, there). Each run of MIN_CONFIDENCE x WEIGHTS trains one uptrained model, as the
# fast model was trained (TRAIN_OPTS) plus --teacher; the fast model's recipe with --seed 2
# says what any retraining moves by itself. Rows go to OUT/rows.tsv: model, what the teacher
# kept, then per scored file the F1 of UPOS UFeats Lemmas LAS MLAS BLEX. Last, every model's
# speed beside the fast model's (`RAW=1 scripts/compare-speed.sh`).
#
# env: SHIFT, OUT (/tmp/uptraining), BIN (target/release/spoolparse), UD (../shared/data/ud),
#      FAST, TEACHER (models to use; trained into OUT when unset), TRAIN_OPTS (default
#      "--jackknife 0 --epochs 8": a 2-core machine's budget; empty for train's defaults),
#      MIN_CONFIDENCE ("0 0.5 0.9"), WEIGHTS ("1").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${BIN:-$root/target/release/spoolparse}")
ud=$(realpath "${UD:-$root/../shared/data/ud}")
evaluator=$(realpath "$root/../shared/tools/conll18_ud_eval.py")
out=${OUT:-/tmp/uptraining}
opts=${TRAIN_OPTS---jackknife 0 --epochs 8}
shift_name=${SHIFT:-atis}
mkdir -p "$out"
cd "$out"

# The base treebank (BASE_TRAIN, BASE_DEV: CoNLL-U), the shifted domain's dev set (TARGET_DEV,
# and its raw text target-dev.raw, read with TARGET_OPTS), and the unlabeled texts of its
# DOMAINs (DOMAIN-train.raw).
unzst() { [ -s "$2" ] || zstd -dcq "$1" >"$2"; }
case $shift_name in
  atis)
    [ $# -gt 0 ] || set -- atis ewt
    for tb in en_ewt en_atis; do
      for split in train dev; do unzst "$ud/$tb/$split.conllu.zst" "$tb-$split.conllu"; done
    done
    base_train_file=en_ewt-train.conllu base_dev_file=en_ewt-dev.conllu target_dev=en_atis-dev.conllu
    target_opts=(--raw-sentences lines)
    sed -n 's/^# text = //p' en_atis-train.conllu >atis-train.raw
    awk '{ print; words += NF } words >= 10000 { exit }' atis-train.raw >atis10k-train.raw
    sed -n 's/^# text = //p' en_atis-dev.conllu >target-dev.raw
    ;;
  reviews)
    [ $# -gt 0 ] || set -- reviews base
    [ -s genre/base-train.conllu ] || python3 "$root/scripts/genre-split.py" reviews genre
    base_train_file=genre/base-train.conllu base_dev_file=genre/base-dev.conllu target_dev=reviews-dev.conllu
    target_opts=()
    unzst genre/reviews/dev.conllu.zst reviews-dev.conllu
    unzst genre/reviews/train.conllu.zst reviews-train.conllu
    python3 "$root/scripts/conllu-to-raw.py" reviews-dev.conllu >target-dev.raw
    python3 "$root/scripts/conllu-to-raw.py" reviews-train.conllu >reviews-train.raw
    # Whole paragraphs: the first blank line after 10,000 words ends it.
    awk '{ print; words += NF } words >= 10000 && NF == 0 { exit }' reviews-train.raw >reviews10k-train.raw
    ;;
  *) echo "scripts/uptraining-eval.sh: no SHIFT $shift_name (atis or reviews)" >&2 && exit 2 ;;
esac
domains=("$@")
python3 "$root/scripts/conllu-to-raw.py" "$base_dev_file" >base-dev.raw

# shellcheck disable=SC2086 # TRAIN_OPTS is a list of options
base_train=(train --train "$base_train_file" --dev "$base_dev_file" --tagger --tokenizer $opts)
fast=${FAST:-$out/fast.model}
teacher=${TEACHER:-$out/teacher.model}
[ -s "$fast" ] || "$bin" "${base_train[@]}" --output "$fast" 2>fast.log
[ -s "$teacher" ] || "$bin" "${base_train[@]}" --neural --output "$teacher" 2>teacher.log

# scores MODEL NAME RAW GOLD [parse options...]: the evaluator's six F1s, tab-separated.
scores() {
  local model=$1 name=$2 raw=$3 gold=$4
  shift 4
  "$bin" parse --model "$model" --format raw "$@" --output "$name.conllu" --overwrite "$raw" 2>/dev/null
  python3 "$evaluator" -v "$gold" "$name.conllu" |
    awk '$1 ~ /^(UPOS|UFeats|Lemmas|LAS|MLAS|BLEX)$/ { printf "%s\t", $7 }'
}

speeds=()
# row NAME MODEL KEPT: one line of rows.tsv.
row() {
  local name=$1 model=$2 kept=$3 target base
  target=$(scores "$model" "$name.target" target-dev.raw "$target_dev" "${target_opts[@]}")
  base=$(scores "$model" "$name.base" base-dev.raw "$base_dev_file")
  printf '%s\t%s\t%s%s\n' "$name" "$kept" "$target" "${base%$'\t'}" >>rows.tsv
  tail -1 rows.tsv
  speeds+=("$name=$bin:$(realpath "$model")")
}

columns='UPOS\tUFeats\tLemmas\tLAS\tMLAS\tBLEX'
printf "model\tkept\t$target_dev: $columns\t$base_dev_file: $columns\n" >rows.tsv
row fast "$fast" -
# The noise any retraining brings: the fast model's recipe with another seed.
[ -s fast-seed2.model ] || "$bin" "${base_train[@]}" --seed 2 --output fast-seed2.model 2>fast-seed2.log
row fast-seed2 fast-seed2.model -
row teacher "$teacher" -
for domain in "${domains[@]}"; do
  case $domain in
    atis | atis10k) unlabeled=("$domain-train.raw" --raw-sentences lines) ;;
    reviews | reviews10k) unlabeled=("$domain-train.raw") ;;
    ewt | base) unlabeled=(base-dev.raw) ;;
    *) echo "scripts/uptraining-eval.sh: no domain $domain (atis, atis10k, ewt; reviews, reviews10k, base)" >&2 && exit 2 ;;
  esac
  for tau in ${MIN_CONFIDENCE:-0 0.5 0.9}; do
    for w in ${WEIGHTS:-1}; do
      name=up-$domain-$tau-$w
      [ -s "$name.model" ] || "$bin" "${base_train[@]}" --output "$name.model" --teacher "$teacher" \
        --unlabeled "${unlabeled[@]}" --teacher-min-confidence "$tau" --teacher-weight "$w" 2>"$name.log"
      kept=$(sed -n 's/^teacher .*: kept \([0-9]* of [0-9]* sentences ([0-9.]*%), [0-9]* of [0-9]* words\).*/\1/p' "$name.log")
      row "$name" "$name.model" "$kept"
    done
  done
done
column -t -s $'\t' rows.tsv
RAW=1 "$root/scripts/compare-speed.sh" "${speeds[@]}"
