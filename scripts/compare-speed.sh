#!/usr/bin/env bash
# Whole-process parse speed of several (binary, model) pairs on en_ewt dev x8 (~200k words,
# gold tags), one thread, default options: ROUNDS rounds with the pairs interleaved, so that
# machine noise hits them alike; prints the median words/s of each and its ratio to the first.
# RAW=1: from raw text instead (the dev set's text by scripts/conllu-to-raw.py, x4: ~100k
# words; the models need a tokenizer and an analysis), the whole pipeline; words/s counts the
# gold words.
#   usage: [ROUNDS=5] [THREADS=1] [RAW=1] scripts/compare-speed.sh LABEL=BINARY:MODEL...
# e.g. the speed lost to a change: scripts/compare-speed.sh before=OLD/spoolparse:M after=target/release/spoolparse:M
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n 2,6p "$0" >&2; exit 2; }
rounds=${ROUNDS:-5}
threads=${THREADS:-1}
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -n "${RAW:-}" ]; then
  zstd -dc "$dev" > "$tmp/dev.conllu"
  python3 "$root/scripts/conllu-to-raw.py" "$tmp/dev.conllu" > "$tmp/dev.txt"
  for _ in 1 2 3 4; do cat "$tmp/dev.txt"; echo; done > "$tmp/input"
  words=$(( 4 * $(awk -F'\t' '$1 ~ /^[0-9]+$/' "$tmp/dev.conllu" | wc -l) ))
  format=(--format raw)
else
  for _ in 1 2 3 4 5 6 7 8; do zstd -dc "$dev"; done > "$tmp/input"
  words=$(awk -F'\t' '$1 ~ /^[0-9]+$/' "$tmp/input" | wc -l)
  format=()
fi
lscpu | grep -E "^Model name" || true
echo "$words words, $threads thread(s), $rounds rounds"
for r in $(seq "$rounds"); do
  for pair in "$@"; do
    label=${pair%%=*}; rest=${pair#*=}; bin=${rest%%:*}; model=${rest#*:}
    start=$(date +%s.%N)
    "$bin" parse --model "$model" --threads "$threads" "${format[@]}" "$tmp/input" --output /dev/null 2>/dev/null
    end=$(date +%s.%N)
    echo "$label $(awk "BEGIN { print $words / ($end - $start) }")" >> "$tmp/times"
  done
done
python3 - "$tmp/times" "$@" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, wps = line.split()
    runs.setdefault(label, []).append(float(wps))
labels = [p.split("=", 1)[0] for p in sys.argv[2:]]
base = statistics.median(runs[labels[0]])
for label in labels:
    m = statistics.median(runs[label])
    print(f"{label:24s} {m:10.0f} words/s (median; runs {', '.join(f'{x:.0f}' for x in runs[label])})  {m / base:.3f}x {labels[0]}")
PY
