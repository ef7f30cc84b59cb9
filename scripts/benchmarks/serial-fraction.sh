#!/usr/bin/env bash
# Where the time goes, and the scaling it allows: `spoolparse parse --threads T` of en_ewt dev x8
# as CoNLL-U, CoNLL-U with --retag, tokenized text (the forms, a sentence a line) and raw text
# (rebuilt from `# text`, paragraphs at `# newdoc`/`# newpar`), each zstd-compressed as nightly
# inputs often are (so that every thread count runs the shared pipeline: a plain file of 1 MB
# or more is parsed as shards at once, each reading and writing its own), for each T of
# THREADS and each BINARY (before and after a change, say), ROUNDS rounds, all of a round's
# runs interleaved.
# Prints per binary, input and threads the median words/s (whole process) and, from parse's
# `busy:` line, the median shares of reading, parsing and writing, the serial fraction (reading
# and writing: one thread at a time) and the speed-up Amdahl's law allows on 16 and 64 cores.
# With --threads 1, CoNLL-U and tokenized text are read in the calling thread as they come
# (their reading is serial there); with more, the pool's serial stages are what is measured.
# The output is plain CoNLL-U, or with OUTPUT=conllu.zst compressed (as the daemon writes it).
#   usage: [ROUNDS=3] [THREADS="1 2"] [OUTPUT=conllu] scripts/benchmarks/serial-fraction.sh MODEL [BINARY...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { sed -n 2,14p "$0" >&2; exit 2; }
model=$1; shift
bins=("$@"); [ ${#bins[@]} -gt 0 ] || bins=("$root/target/release/spoolparse")
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
[ -f "$dev" ] || { echo "skipped: $dev is absent" >&2; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
words=$("$root/scripts/benchmarks/dev8-inputs.sh" "$tmp")
for f in conllu raw txt; do zstd -q --rm "$tmp/dev8.$f"; done
lscpu | grep -E "^Model name" || true
echo "$words words (of the CoNLL-U input), threads: ${THREADS:-1 2}, ${ROUNDS:-3} rounds"
for _ in $(seq "${ROUNDS:-3}"); do
  for t in ${THREADS:-1 2}; do
    for input in conllu retag txt raw; do
      for i in "${!bins[@]}"; do
        file="$tmp/dev8.$input.zst"; extra=()
        [ "$input" = retag ] && { file="$tmp/dev8.conllu.zst"; extra=(--retag); }
        start=$(date +%s.%N)
        busy=$("${bins[$i]}" parse --model "$model" --threads "$t" "${extra[@]}" "$file" \
          --output "$tmp/out.${OUTPUT:-conllu}" --overwrite 2>&1 | grep '^busy:')
        end=$(date +%s.%N)
        echo "$i $input $t $(awk "BEGIN { print $words / ($end - $start) }") $busy" >> "$tmp/runs"
      done
    done
  done
done
python3 - "$tmp/runs" "${bins[@]}" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    i, label, threads, wps, busy = line.split(" ", 4)
    share = [float(x) for x in re.findall(r"\(([0-9.]+)%\)", busy)]
    runs.setdefault((int(i), label, int(threads)), []).append((float(wps), *share))
for (i, label, threads), rows in sorted(runs.items()):
    med = [statistics.median(col) for col in zip(*rows)]
    s = (med[1] + med[3]) / 100
    amdahl = lambda n: 1 / (s + (1 - s) / n)
    print(f"{sys.argv[2 + i]}\n  {label:6s} {threads} thread(s): {med[0]:8.0f} words/s; reading {med[1]:4.1f}%, "
          f"parsing {med[2]:4.1f}%, writing {med[3]:4.1f}%; serial {100 * s:4.1f}%: "
          f"{amdahl(16):4.1f}x on 16 cores, {amdahl(64):4.1f}x on 64")
PY
