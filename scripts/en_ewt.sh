#!/usr/bin/env bash
# The main job on the shared English data: train (dynamic oracle, 15 epochs), parse dev, score.
#   usage: scripts/en_ewt.sh [OUT_DIR]        (default: runs/en_ewt)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud/en_ewt"
out=${1:-$root/runs/en_ewt}
[ -d "$ud" ] || { echo "$ud not found: the shared treebanks must sit beside the repository" >&2; exit 1; }
mkdir -p "$out"
cargo build --release --manifest-path "$root/Cargo.toml"
sp="$root/target/release/spoolparse"
time "$sp" train --train "$ud/train.conllu.zst" --dev "$ud/dev.conllu.zst" --output "$out/en_ewt.model" --overwrite
"$sp" parse --model "$out/en_ewt.model" "$ud/dev.conllu.zst" --output "$out/dev.parsed.conllu" --overwrite
"$sp" eval "$ud/dev.conllu.zst" "$out/dev.parsed.conllu"
