#!/usr/bin/env bash
# Speed of one spoolparse thread as a multiple of UDPipe 1's greedy parser, measured in the same
# run: ROUNDS times (default 5) `spoolparse bench` (parsing only), then UDPipe
# (../shared/tools/udpipe-speed.sh, median of its three greedy timings, which it runs first),
# then `spoolparse parse --no-confidence` (reading and writing included, as UDPipe's timing
# includes them). The bench runs right before UDPipe's greedy timings, not after its minute of
# beam-search timings: this machine's speed drifts by a third within minutes (UDPipe alone
# measured 33k to 49k words/s in one run), so only measurements close in time compare. Prints
# each round and the median ratios.
#   usage: [UDPIPE_CACHE=DIR] scripts/udpipe-ratio.sh MODEL [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/udpipe-ratio.sh MODEL [ROUNDS]}
rounds=${2:-5}
shared="$root/../shared"
[ -d "$shared/data/ud/en_ewt" ] || { echo "skipped: $shared/data/ud/en_ewt is absent" >&2; exit 0; }
# UDPipe's trained model and the data are kept here between runs (the tool's own default).
cache=${UDPIPE_CACHE:-$HOME/.cache/udpipe-peer}
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
# The tool writes en_ewt dev x8 there too, the same way; the first bench may run before it does.
mkdir -p "$cache"
[ -s "$cache/dev8.conllu" ] ||
  for i in 1 2 3 4 5 6 7 8; do zstd -dc "$shared/data/ud/en_ewt/dev.conllu.zst"; done >"$cache/dev8.conllu"
lscpu | grep -E "^Model name" || true
words_per_s() { grep -oE '[0-9]+ words/s' | head -1 | cut -d' ' -f1; }
ratios_bench=(); ratios_parse=()
for round in $(seq "$rounds"); do
  bench=$("$sp" bench --model "$model" "$cache/dev8.conllu" --threads 1 --seconds 4 | words_per_s)
  udpipe=$("$shared/tools/udpipe-speed.sh" "$cache" | grep greedy | grep -oE 'median [0-9]+' | cut -d' ' -f2)
  parse=$("$sp" parse --no-confidence --threads 1 --model "$model" "$cache/dev8.conllu" --output /dev/null 2>&1 \
    | words_per_s)
  rb=$(awk "BEGIN {printf \"%.2f\", $bench / $udpipe}"); rp=$(awk "BEGIN {printf \"%.2f\", $parse / $udpipe}")
  echo "round $round: udpipe greedy $udpipe words/s; spoolparse bench $bench (${rb}x), parse $parse (${rp}x)"
  ratios_bench+=("$rb"); ratios_parse+=("$rp")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median ratio, one thread: bench $(median "${ratios_bench[@]}")x, parse end to end $(median "${ratios_parse[@]}")x"
