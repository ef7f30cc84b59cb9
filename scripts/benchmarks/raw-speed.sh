#!/usr/bin/env bash
# Whole-process parse speed of raw text against tokenized text and CoNLL-U, the same model (with
# tagger and tokenizer), on en_ewt dev x8, with each count of THREADS (default 1): the raw text is rebuilt from `# text`
# (paragraphs at `# newdoc`/`# newpar`), the tokenized text is the forms, one sentence a line,
# and every format is tagged (CoNLL-U with --retag), so that the difference is tokenizing.
# ROUNDS rounds, the formats interleaved; prints the median words/s (words: of the CoNLL-U
# input; raw text yields about as many) and the ratio to tokenized text with as many threads.
#   usage: [ROUNDS=3] [THREADS="1 2"] scripts/benchmarks/raw-speed.sh MODEL [BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { sed -n 2,8p "$0" >&2; exit 2; }
model=$1
bin=${2:-$root/target/release/spoolparse}
rounds=${ROUNDS:-3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
words=$("$root/scripts/benchmarks/dev8-inputs.sh" "$tmp")
lscpu | grep -E "^Model name" || true
threads=${THREADS:-1}
echo "$words words, threads: $threads, $rounds rounds"
for r in $(seq "$rounds"); do
  for t in $threads; do
    for f in raw txt conllu; do
      extra=(); [ "$f" = conllu ] && extra=(--retag)
      start=$(date +%s.%N)
      "$bin" parse --model "$model" --threads "$t" "${extra[@]}" "$tmp/dev8.$f" --output "$tmp/out.$f.conllu" --overwrite 2>/dev/null
      end=$(date +%s.%N)
      echo "$f $t $(awk "BEGIN { print $words / ($end - $start) }")" >> "$tmp/times"
    done
  done
done
echo "raw output: $(grep -c '^# text' "$tmp/out.raw.conllu") sentences, $(awk -F'\t' '$1 ~ /^[0-9]+$/' "$tmp/out.raw.conllu" | wc -l) words"
python3 - "$tmp/times" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, threads, wps = line.split()
    runs.setdefault((label, int(threads)), []).append(float(wps))
for threads in sorted({t for _, t in runs}):
    base = statistics.median(runs[("txt", threads)])
    for label in ["raw", "txt", "conllu"]:
        m = statistics.median(runs[(label, threads)])
        print(f"{label:8s} {threads} thread(s) {m:10.0f} words/s (median; runs "
              f"{', '.join(f'{x:.0f}' for x in runs[(label, threads)])})  {m / base:.3f}x tokenized text")
PY
