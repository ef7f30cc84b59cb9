#!/usr/bin/env bash
# From a fresh clone to a running daemon on config/spoolparse.toml: builds, trains the example
# model from ../shared/data/ud/en_ewt if it is missing (parser, tagger and raw-text tokenizer, ~3 min on 2 cores),
# then runs the daemon in the foreground (Ctrl-C stops it).
#   usage: scripts/daemon.sh [CONFIG]
# Then, from another shell in the repository root:
#   cp ../shared/data/ud/en_ewt/dev.conllu.zst runs/spool/.dev.conllu.zst
#   mv runs/spool/.dev.conllu.zst runs/spool/incoming/dev.conllu.zst
#   ls runs/out/accepted runs/out/lowconf runs/spool/done
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
config=${1:-config/spoolparse.toml}
cargo build --release
sp="$root/target/release/spoolparse"
model=$(sed -n 's/^model *= *"\(.*\)"/\1/p' "$config" | head -1)
if [ ! -f "$model" ]; then
  ud="$root/../shared/data/ud/en_ewt"
  [ -d "$ud" ] || { echo "$model is missing and $ud is not there to train it from" >&2; exit 1; }
  mkdir -p "$(dirname "$model")"
  echo "training $model (parser and tagger) from $ud ..." >&2
  "$sp" train --train "$ud/train.conllu.zst" --dev "$ud/dev.conllu.zst" --output "$model" \
    --tagger --tokenizer --jackknife 0 --epochs 8 --quantize i8
fi
exec "$sp" daemon --config "$config"
