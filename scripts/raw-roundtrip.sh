#!/usr/bin/env bash
# Round trip of raw text (issue 31): for each dev file (and train file: SPLITS="dev train"), its raw text (scripts/conllu-to-raw.py)
# is parsed by `spoolparse parse --format raw` (default threads), the text is rebuilt from the
# CoNLL-U written (`conllu-to-raw.py --exact`, written apart from the Rust side's recover_text)
# and compared with the input byte for byte. Prints one line per file; exits 1 on any
# difference, naming the first differing byte.
#   usage: [SPLITS="dev train"] scripts/raw-roundtrip.sh TREEBANK=MODEL...   (MODEL trained
#          with --tokenizer; a split's file is ../shared/data/ud/TREEBANK/SPLIT.conllu.zst)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud"
[ -d "$ud" ] || { echo "skipped: $ud is absent" >&2; exit 0; }
[ $# -gt 0 ] || { echo "usage: scripts/raw-roundtrip.sh TREEBANK=MODEL..." >&2; exit 2; }
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for arg in "$@"; do
  tb=${arg%%=*} model=${arg#*=}
  for split in ${SPLITS:-dev}; do
    f="$out/$tb-$split"
    zstd -qdc "$ud/$tb/$split.conllu.zst" | python3 "$root/scripts/conllu-to-raw.py" >"$f.txt"
    "$sp" parse --model "$model" --format raw "$f.txt" --output "$f.conllu" 2>/dev/null
    python3 "$root/scripts/conllu-to-raw.py" --exact "$f.conllu" >"$f.back"
    sentences=$(grep -c '^# sent_id' "$f.conllu")
    if cmp -s "$f.txt" "$f.back"; then
      printf '%s %s: %s bytes, %s sentences: the text comes back byte for byte\n' "$tb" "$split" "$(wc -c <"$f.txt")" "$sentences"
    else
      printf '%s %s: DIFFERS: %s\n' "$tb" "$split" "$(cmp "$f.txt" "$f.back" 2>&1 | head -1)"
      status=1
    fi
  done
done
exit $status
