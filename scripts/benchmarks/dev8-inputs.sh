#!/usr/bin/env bash
# Writes en_ewt dev x8 (~200k words) into DIR as the benchmarks read it: dev8.conllu; dev8.raw,
# the raw text rebuilt from `# text` (a blank line at each `# newdoc` and `# newpar`); dev8.txt,
# the forms, a sentence a line. Prints the number of words (of the CoNLL-U file).
#   usage: scripts/benchmarks/dev8-inputs.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: scripts/benchmarks/dev8-inputs.sh DIR}
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
for _ in 1 2 3 4 5 6 7 8; do zstd -dc "$dev"; done > "$dir/dev8.conllu"
awk '/^# newdoc/ || /^# newpar/ { if (n) print ""; } /^# text = / { sub(/^# text = /, ""); print; n = 1 }' \
  "$dir/dev8.conllu" > "$dir/dev8.raw"
awk -F'\t' '$1 ~ /^[0-9]+$/ { line = line (line == "" ? "" : " ") $2 } /^$/ { if (line != "") print line; line = "" }' \
  "$dir/dev8.conllu" > "$dir/dev8.txt"
awk -F'\t' '$1 ~ /^[0-9]+$/' "$dir/dev8.conllu" | wc -l
