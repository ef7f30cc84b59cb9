#!/usr/bin/env bash
# Speed of one spoolparse thread as a multiple of UDPipe 1's greedy parser, measured in the same
# run: ROUNDS times (default 3) UDPipe (../shared/tools/udpipe-speed.sh, median of its three
# timings), then `spoolparse bench` (parsing only) and `spoolparse parse --no-confidence`
# (reading and writing included, as UDPipe's timing includes them), alternating so that a slow
# phase of a noisy machine hits both. Prints each round and the median ratios.
#   usage: [UDPIPE_CACHE=DIR] scripts/udpipe-ratio.sh MODEL [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/udpipe-ratio.sh MODEL [ROUNDS]}
rounds=${2:-3}
shared="$root/../shared"
[ -d "$shared/data/ud/en_ewt" ] || { echo "skipped: $shared/data/ud/en_ewt is absent" >&2; exit 0; }
# UDPipe's trained model and the data are kept here between runs (the tool's own default).
cache=${UDPIPE_CACHE:-$HOME/.cache/udpipe-peer}
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
lscpu | grep -E "^Model name" || true
words_per_s() { grep -oE '[0-9]+ words/s' | head -1 | cut -d' ' -f1; }
ratios_bench=(); ratios_parse=()
for round in $(seq "$rounds"); do
  udpipe=$("$shared/tools/udpipe-speed.sh" "$cache" | grep greedy | grep -oE 'median [0-9]+' | cut -d' ' -f2)
  bench=$("$sp" bench --model "$model" "$cache/dev8.conllu" --threads 1 --seconds 4 | words_per_s)
  parse=$("$sp" parse --no-confidence --threads 1 --model "$model" "$cache/dev8.conllu" --output /dev/null 2>&1 \
    | words_per_s)
  rb=$(awk "BEGIN {printf \"%.2f\", $bench / $udpipe}"); rp=$(awk "BEGIN {printf \"%.2f\", $parse / $udpipe}")
  echo "round $round: udpipe greedy $udpipe words/s; spoolparse bench $bench (${rb}x), parse $parse (${rp}x)"
  ratios_bench+=("$rb"); ratios_parse+=("$rp")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median ratio, one thread: bench $(median "${ratios_bench[@]}")x, parse end to end $(median "${ratios_parse[@]}")x"
