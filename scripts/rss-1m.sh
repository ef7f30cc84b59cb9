#!/usr/bin/env bash
# Peak RSS while parsing a stream of ~1 million sentences (en_ewt train x80, streamed through a
# pipe, never on disk), with 2 threads.
#   usage: scripts/rss-1m.sh MODEL
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: scripts/rss-1m.sh MODEL}
train="$root/../shared/data/ud/en_ewt/train.conllu.zst"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
ls -l "$model"
for _ in $(seq 80); do zstd -dc "$train"; done |
  /usr/bin/time -f "peak RSS %M kB, %e s wall" "$root/target/release/spoolparse" parse --model "$model" --threads 2 --output /dev/null
