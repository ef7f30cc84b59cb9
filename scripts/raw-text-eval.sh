#!/usr/bin/env bash
# Parsing from raw text (issue 31), against the peer UDPipe 1 does it: for each treebank, the
# dev set's raw text (scripts/conllu-to-raw.py: `# text` by paragraph from `# newdoc`/`# newpar`)
# is tokenized, tagged and parsed by
#   - UDPipe 1 (scripts/udpipe-raw.py: a whole model, its own tokenizer, tagger and parser,
#     trained on the train split with the shortened options that script names; cached in
#     UDPIPE_CACHE), with its default beam search and greedy (beam_search=1);
#   - spoolparse, for each TREEBANK=MODEL argument: `spoolparse parse --format raw --threads 1`
#     (skipped, saying why, when this build or the model has no tokenizer);
# and scored by the official evaluator (../shared/tools/conll18_ud_eval.py): Tokens, Sentences
# and Words F1, UPOS and LAS F1 over aligned words; `spoolparse eval` must agree with it on LAS
# (a column shows its figure). "LAS gold tok" is LAS when the same system parses the gold
# tokenization (it tags it too: spoolparse with --retag=always). words/s: gold dev words over the wall time of one whole process
# (interpreter start and model load included), one thread; machines shared with other work
# make it noisy. Outputs stay in OUT (default target/raw-text-eval); the table printed holds
# every treebank measured there, the last measurement of each.
#   usage: [TREEBANKS="hu_szeged el_gdt en_ewt"] [OUT=DIR] [UDPIPE_CACHE=DIR] [UDPIPE_VENV=DIR]
#          [UDPIPE_TRAINING=default] scripts/raw-text-eval.sh [TREEBANK=SPOOLPARSE_MODEL...]
# UDPIPE_TRAINING=default trains UDPipe with all its defaults (udpipe-raw.py; give it its own
# UDPIPE_CACHE: a cached model trained otherwise is retrained); the table names the options.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared"
ud="$shared/data/ud"
[ -d "$ud" ] || { echo "skipped: $ud is absent" >&2; exit 0; }
evaluator="$shared/tools/conll18_ud_eval.py"
treebanks=${TREEBANKS:-hu_szeged el_gdt en_ewt}
out=${OUT:-$root/target/raw-text-eval}
cache=${UDPIPE_CACHE:-$HOME/.cache/udpipe-peer/raw}
venv=${UDPIPE_VENV:-$root/target/python-venv}
declare -A models=()
for arg in "$@"; do
  [[ $arg == *=* ]] || { echo "usage: scripts/raw-text-eval.sh [TREEBANK=SPOOLPARSE_MODEL...]" >&2; exit 2; }
  models[${arg%%=*}]=${arg#*=}
done
mkdir -p "$out" "$cache"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import ufal.udpipe" 2>/dev/null ||
  "$venv/bin/python" -m pip install -q --disable-pip-version-check ufal.udpipe
py="$venv/bin/python"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"

# timed FILE CMD...: runs CMD, writes its wall seconds to FILE.
timed() {
  local file=$1 s e
  shift
  s=$(date +%s.%N)
  "$@"
  e=$(date +%s.%N)
  awk "BEGIN { printf \"%.3f\", $e - $s }" >"$file"
}
# official GOLD SYSTEM METRIC...: the F1 of each METRIC in `conll18_ud_eval.py -v`.
official() {
  local table
  table=$(python3 "$evaluator" -v "$1" "$2")
  shift 2
  for m in "$@"; do
    awk -F'|' -v m="$m" '$1 ~ "^"m" *$" { gsub(/ /, "", $4); printf "%s ", $4 }' <<<"$table"
  done
}
# ours GOLD SYSTEM: LAS F1 by `spoolparse eval`.
ours() {
  "$sp" eval "$1" "$2" --json | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["aligned"]["las"]["f1"])'
}
# The table keeps the rows of treebanks this run does not measure (TREEBANKS=... runs add up).
rows="$out/table.tsv"
touch "$rows"
for tb in $treebanks; do
  awk -F'\t' -v tb="$tb" '$1 != tb' "$rows" >"$rows.tmp" && mv "$rows.tmp" "$rows"
done
# row TB SYSTEM RAW_OUTPUT GOLD_TOKENS_OUTPUT SECONDS_FILE: one line of the table.
row() {
  local tb=$1 name=$2 raw=$3 goldtok=$4 seconds=$5 gold="$out/$1.gold.conllu" figures las_gold las_ours words
  figures=$(official "$gold" "$raw" Tokens Sentences Words UPOS LAS)
  las_gold=$(official "$gold" "$goldtok" LAS)
  las_ours=$(ours "$gold" "$raw")
  words=$(grep -c $'^[0-9]*\t' "$gold")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tb" "$name" "$(tr ' ' '\t' <<<"${figures% }")" "$las_ours" "${las_gold% }" \
    "$(awk "BEGIN { printf \"%.0f\", $words / $(cat "$seconds") }")" >>"$rows"
}

for tb in $treebanks; do
  gold="$out/$tb.gold.conllu"
  zstd -qdcf "$ud/$tb/dev.conllu.zst" >"$gold"
  python3 "$root/scripts/conllu-to-raw.py" "$gold" >"$out/$tb.txt"
  [ -s "$cache/$tb-train.conllu" ] || zstd -qdcf "$ud/$tb/train.conllu.zst" >"$cache/$tb-train.conllu"
  nice -n 10 "$py" "$root/scripts/udpipe-raw.py" train "$cache/$tb-train.conllu" "$cache/$tb.udpipe"
  for search in beam greedy; do
    base="$out/$tb.udpipe-$search"
    timed "$base.seconds" "$py" "$root/scripts/udpipe-raw.py" run "$cache/$tb.udpipe" "$out/$tb.txt" "$base.raw.conllu" \
      "raw-$search" >/dev/null
    "$py" "$root/scripts/udpipe-raw.py" run "$cache/$tb.udpipe" "$gold" "$base.gold.conllu" "gold-$search" >/dev/null
    row "$tb" "udpipe1 $search ($(cat "$cache/$tb.udpipe.options"))" "$base.raw.conllu" "$base.gold.conllu" "$base.seconds"
  done
  model=${models[$tb]:-}
  [ -n "$model" ] || continue
  base="$out/$tb.spoolparse"
  if ! "$sp" parse --help | grep -qE '^ +- raw'; then
    echo "$tb: spoolparse skipped: this build's parse has no --format raw" >&2
    continue
  fi
  if ! timed "$base.seconds" "$sp" parse --model "$model" --format raw --threads 1 "$out/$tb.txt" \
    --output "$base.raw.conllu" --overwrite 2>"$base.log"; then
    echo "$tb: spoolparse skipped: $model cannot parse raw text: $(head -1 "$base.log")" >&2
    continue
  fi
  if ! "$sp" parse --model "$model" --threads 1 --retag=always "$gold" --output "$base.gold.conllu" --overwrite \
    2>>"$base.log"; then
    echo "$tb: spoolparse could not tag the gold tokens ($(tail -1 "$base.log")): LAS gold tok is on gold tags" >&2
    "$sp" parse --model "$model" --threads 1 "$gold" --output "$base.gold.conllu" --overwrite 2>>"$base.log"
  fi
  row "$tb" spoolparse "$base.raw.conllu" "$base.gold.conllu" "$base.seconds"
done

echo "| treebank | system | Tokens | Sentences | Words | UPOS | LAS | LAS (spoolparse eval) | LAS gold tok | words/s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
sed 's/\t/ | /g; s/^/| /; s/$/ |/' "$rows"
awk -F'\t' '$7 != $8 { print "spoolparse eval and the official evaluator disagree on LAS: " $0; bad = 1 } END { exit bad }' "$rows" >&2
