#!/usr/bin/env bash
# Parse speed on en_ewt dev x8 (~200k words, gold tags): `spoolparse bench` (in memory, model
# load excluded) with 1 and 2 threads, then `spoolparse parse` end to end (reading, writing).
#   usage: scripts/parse-speed.sh MODEL
# Compare with ../shared/tools/udpipe-speed.sh run right before or after (machines are noisy).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/parse-speed.sh MODEL}
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for _ in 1 2 3 4 5 6 7 8; do zstd -dc "$dev"; done > "$tmp/dev8.conllu"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
lscpu | grep -E "^Model name" || true
for threads in 1 2 1 2; do
  "$sp" bench --model "$model" "$tmp/dev8.conllu" --threads "$threads" --seconds 5
done
for threads in 1 2; do
  "$sp" parse --model "$model" "$tmp/dev8.conllu" --threads "$threads" --output /dev/null
done
