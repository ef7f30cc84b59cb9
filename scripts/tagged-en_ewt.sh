#!/usr/bin/env bash
# Parsing tokenized text: trains en_ewt models with the tagger, with 4-fold jackknifing and
# without (parser on gold tags), then parses en_ewt dev given as tokenized text (one sentence
# per line, the gold words) and scores tags and trees against gold.
#   usage: scripts/tagged-en_ewt.sh [OUT_DIR]        (default: runs/tagged)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud/en_ewt"
out=${1:-$root/runs/tagged}
mkdir -p "$out"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
zstd -dc "$ud/dev.conllu.zst" | awk -F'\t' '/^$/ {print line; line=""; next} $1 ~ /^[0-9]+$/ {line = line (line == "" ? "" : " ") $2}' > "$out/dev.txt"
for jk in 4 0; do
  /usr/bin/time -f "training: %e s wall, peak RSS %M kB" "$sp" train --train "$ud/train.conllu.zst" --dev "$ud/dev.conllu.zst" \
    --output "$out/jk$jk.model" --overwrite --tagger --jackknife "$jk" 2> "$out/jk$jk.train.log"
  grep -E "tagger:|kept|training:" "$out/jk$jk.train.log"
  "$sp" parse --model "$out/jk$jk.model" "$out/dev.txt" --output "$out/jk$jk.dev.conllu" --overwrite
  echo "== jackknife $jk: en_ewt dev from tokenized text"
  "$sp" eval "$ud/dev.conllu.zst" "$out/jk$jk.dev.conllu"
  "$sp" parse --model "$out/jk$jk.model" "$ud/dev.conllu.zst" --output "$out/jk$jk.gold.conllu" --overwrite 2>/dev/null
  echo "== jackknife $jk: en_ewt dev with gold tags (the gap to tokenized text)"
  "$sp" eval "$ud/dev.conllu.zst" "$out/jk$jk.gold.conllu"
done
