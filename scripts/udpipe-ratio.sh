#!/usr/bin/env bash
# Speed as users run it, as a multiple of UDPipe 1's greedy parser measured in the same run:
# whole processes on en_ewt dev ×8 (~200k words), `spoolparse parse` with the default options
# (confidences on) against UDPipe greedy including its interpreter start and model load
# (../shared/tools/udpipe-speed.sh's whole-process line, median of its 3 runs). Each round
# alternates: spoolparse 1 and 2 threads, UDPipe, spoolparse 1 and 2 threads again; a round's
# spoolparse figure is the mean of its two runs, so that drift in the machine's speed (a third
# within minutes here) falls on both sides. Also prints `bench` (in memory, model load
# excluded) for reference. Prints each round and the medians: the one-thread ratio to UDPipe,
# two threads against one and against UDPipe (parse's default uses every CPU).
#   usage: [UDPIPE_CACHE=DIR] scripts/udpipe-ratio.sh MODEL [ROUNDS]    (ROUNDS default 3)
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
mkdir -p "$cache"
[ -s "$cache/dev8.conllu" ] ||
  for i in 1 2 3 4 5 6 7 8; do zstd -dc "$shared/data/ud/en_ewt/dev.conllu.zst"; done >"$cache/dev8.conllu"
words=$(grep -c $'^[0-9]*\t' "$cache/dev8.conllu")
lscpu | grep -E "^Model name" || true
echo "input: en_ewt dev x8, $words words; model $model"
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
whole_number() { awk "BEGIN { printf \"%.0f\", $1 }"; }
# whole THREADS: words/s of one whole `spoolparse parse` process with the default options.
whole() {
  local s e
  s=$(date +%s.%N)
  "$sp" parse --threads "$1" --model "$model" "$cache/dev8.conllu" --output /dev/null 2>/dev/null
  e=$(date +%s.%N)
  calc "$words / ($e - $s)"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratios=(); scaling=(); ratios2=()
for round in $(seq "$rounds"); do
  one=$(whole 1); two=$(whole 2)
  udpipe=$("$shared/tools/udpipe-speed.sh" "$cache" | grep "whole process" | grep -oE '[0-9]+ words/s' | cut -d' ' -f1)
  one=$(whole_number "($one + $(whole 1)) / 2"); two=$(whole_number "($two + $(whole 2)) / 2")
  bench=$("$sp" bench --model "$model" "$cache/dev8.conllu" --threads 1 --seconds 3 | grep -oE '[0-9]+ words/s' | head -1 | cut -d' ' -f1)
  r=$(calc "$one / $udpipe"); s=$(calc "$two / $one")
  echo "round $round: udpipe greedy whole process $udpipe words/s; spoolparse parse 1 thread $one (${r}x), 2 threads $two (${s}x one thread); bench 1 thread $bench ($(calc "$bench / $udpipe")x)"
  ratios+=("$r"); scaling+=("$s"); ratios2+=("$(calc "$two / $udpipe")")
done
echo "median: spoolparse parse, one thread, $(median "${ratios[@]}")x UDPipe greedy (whole processes); two threads $(median "${scaling[@]}")x one thread, $(median "${ratios2[@]}")x UDPipe"
echo "(parse without --threads uses one thread per CPU it may use: $(nproc) here)"
