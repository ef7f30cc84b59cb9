#!/usr/bin/env bash
# Parse speed, one thread: en_ewt dev x8 (~200k words, gold tags), three runs, with a model
# trained by scripts/en_ewt.sh. Prints the words/s of each run (I/O and model load included).
#   usage: scripts/parse-speed.sh MODEL
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/parse-speed.sh MODEL}
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for _ in 1 2 3 4 5 6 7 8; do zstd -dc "$dev"; done > "$tmp/dev8.conllu"
cargo build --release --manifest-path "$root/Cargo.toml"
for _ in 1 2 3; do
  "$root/target/release/spoolparse" parse --model "$model" "$tmp/dev8.conllu" --output /dev/null
done
