#!/usr/bin/env bash
# Whether two spoolparse binaries (before and after a change) write the same bytes from the same
# input: each dev file of en_ewt, el_gdt, hu_szeged and en_atis (through MODEL_DIR/TB.model, or
# MODEL_DIR/en_ewt.model where it has none) as raw text three ways (paragraphs as `# newdoc`/
# `# newpar` mark them, by scripts/conllu-to-raw.py; a sentence a line with no blank line; all
# on one line with no line feed),
# the lines one also with `--raw-sentences lines`, and as CoNLL-U with `--retag`; each with 1 and
# 2 threads, and the files of the first round again zstd-compressed (read through the shared
# pipeline, where a plain file of 1 MB or more is parsed as shards). Prints one line per output
# (`same` or `DIFFERS`, with the first differing line) and exits 1 if any differs.
#   usage: scripts/experiments/same-output.sh MODEL_DIR BINARY_BEFORE BINARY_AFTER
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 3 ] || { sed -n 2,11p "$0" >&2; exit 2; }
models=$1; before=$2; after=$3
ud="$root/../shared/data/ud"
[ -d "$ud" ] || { echo "skipped: $ud is absent" >&2; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
status=0
for tb in en_ewt el_gdt hu_szeged en_atis; do
  model="$models/$tb.model"; [ -f "$model" ] || model="$models/en_ewt.model"
  src="$tmp/$tb"
  zstd -dc "$ud/$tb/dev.conllu.zst" > "$src.conllu"
  "$root/scripts/conllu-to-raw.py" "$src.conllu" > "$src.paragraphs.raw"
  sed -n 's/^# text = //p' "$src.conllu" > "$src.lines.raw"
  sed -n 's/^# text = //p' "$src.conllu" | tr '\n' ' ' > "$src.one-line.raw"
  for input in paragraphs.raw lines.raw one-line.raw lines.raw:lines conllu:retag; do
    file="$src.${input%%:*}"; extra=()
    case $input in *:lines) extra=(--raw-sentences lines) ;; *:retag) extra=(--retag) ;; esac
    for zst in "" .zst; do
      [ -n "$zst" ] && [ ! -f "$file.zst" ] && zstd -q -k "$file"
      for threads in 1 2; do
        for side in before after; do
          bin=$before; [ $side = after ] && bin=$after
          "$bin" parse --model "$model" --threads "$threads" "${extra[@]}" "$file$zst" \
            --output "$tmp/$side.conllu" --overwrite 2> "$tmp/$side.err" || { cat "$tmp/$side.err" >&2; exit 1; }
        done
        name="$tb ${input} threads=$threads${zst:+ compressed}"
        if cmp -s "$tmp/before.conllu" "$tmp/after.conllu"; then
          echo "same     $name ($(grep -c '^# text' "$tmp/after.conllu") sentences)"
        else
          echo "DIFFERS  $name: $(cmp "$tmp/before.conllu" "$tmp/after.conllu" | head -1)"
          status=1
        fi
      done
    done
  done
done
exit $status
