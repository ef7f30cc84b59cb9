#!/usr/bin/env bash
# Instructions, not seconds: each BINARY's whole `spoolparse parse` of en_ewt dev (25k words)
# under valgrind's callgrind, which counts the instructions executed, the same from run to run
# within a few thousandths. On this 2-core VM, paired timings of one binary against itself
# vary by 5 to 8% between quartiles, so a change of a few percent, or a bisect across tens of
# commits, reads the counts first and times only what they point at (docs/speed.md, "Finding
# a lost few percent"). Prints per binary the instructions, per word, and the ratio to the
# first BINARY; with PROFILE=N, the N functions whose own instructions changed most against
# the first BINARY (inlining moves counts between functions: read the total first).
# INPUT=raw parses the dev set's raw text (scripts/conllu-to-raw.py; the model needs a
# tokenizer), INPUT=conllu (default) the CoNLL-U file; THREADS (default 1) is passed on.
# Counts say nothing of cache misses or of threads waiting on each other: time what they
# clear with scripts/compare-speed.sh.
#   usage: [INPUT=conllu|raw] [THREADS=1] [PROFILE=N] scripts/benchmarks/instructions.sh MODEL BINARY...
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { sed -n 2,14p "$0" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
model=$1; shift
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
[ -f "$dev" ] || { echo "skipped: $dev is absent" >&2; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
zstd -dcq "$dev" > "$tmp/dev.conllu"
words=$(awk -F'\t' '$1 ~ /^[0-9]+$/' "$tmp/dev.conllu" | wc -l)
case "${INPUT:-conllu}" in
  conllu) input="$tmp/dev.conllu"; format=() ;;
  raw) python3 "$root/scripts/conllu-to-raw.py" "$tmp/dev.conllu" > "$tmp/dev.txt"; input="$tmp/dev.txt"
       format=(--format raw) ;;
  *) echo "INPUT is conllu or raw" >&2; exit 2 ;;
esac
echo "en_ewt dev, ${INPUT:-conllu}, $words words (of the CoNLL-U file), ${THREADS:-1} thread(s)"
i=0
for bin in "$@"; do
  valgrind --tool=callgrind --callgrind-out-file="$tmp/$i.out" "$bin" parse --model "$model" \
    --threads "${THREADS:-1}" "${format[@]}" "$input" --output "$tmp/$i.conllu" --overwrite 2> "$tmp/$i.log" ||
    { cat "$tmp/$i.log" >&2; exit 1; }
  grep -oE 'Collected : [0-9]+' "$tmp/$i.log" | grep -oE '[0-9]+' > "$tmp/$i.total"
  callgrind_annotate --auto=no --inclusive=no --threshold=100 "$tmp/$i.out" > "$tmp/$i.functions" 2>/dev/null
  i=$((i + 1))
done
python3 - "$tmp" "$words" "${PROFILE:-0}" "$@" <<'PY'
import collections, re, sys
tmp, words, profile, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
totals = [int(open(f"{tmp}/{i}.total").read()) for i in range(len(bins))]
for i, b in enumerate(bins):
    print(f"{b}: {totals[i]:,} instructions, {totals[i] / words:,.0f} a word, {totals[i] / totals[0]:.4f}x the first")
def functions(i):
    own = collections.Counter()
    for line in open(f"{tmp}/{i}.functions"):
        m = re.match(r"\s*([0-9,]+) \([ 0-9.]+%\)\s+(.*?)(?: \[[^]]*\])?\s*$", line)
        if m and "PROGRAM TOTALS" not in m.group(2):
            own[m.group(2).split(":", 1)[-1]] += int(m.group(1).replace(",", ""))
    return own
if profile:
    first = functions(0)
    for i in range(1, len(bins)):
        other = functions(i)
        print(f"-- {bins[i]} against {bins[0]}: the {profile} largest changes of a function's own instructions")
        for name in sorted(set(first) | set(other), key=lambda k: -abs(other[k] - first[k]))[:profile]:
            print(f"{other[name] - first[name]:>+14,} {first[name]:>14,} -> {other[name]:<14,} {name[:110]}")
PY
