#!/usr/bin/env bash
# The whole pipeline's confidence (issue 38), measured as its closing note reports it. For each
# TREEBANK=MODEL (a model trained with `train --tagger --tokenizer --dev`, so "before" is its
# own confidence fitted on all of dev), dev is split into halves by alternate documents
# (`# newdoc`, else `# newpar`, else runs of ten sentences); each half is parsed from raw text (scripts/conllu-to-raw.py)
# and from gold tokens (`--retag=always`) by the model as given ("before") and by the model
# refitted on the other half (`spoolparse calibrate`, "after"), and scored by
# `spoolparse eval --calibration`: arc ECE, LAS of the words kept at 25/50/80% beside the best
# ranking, and how many of the arcs below 0.5 share the commonest value (the floor). "chance" is
# the ECE exact probabilities would show on as many arcs (`ece_floor`). With
# EN_MODEL=M (an en_ewt model), also text unlike its training data: en_atis dev one query per
# line, hu_szeged and el_gdt dev as raw text, before and after refitting on all of en_ewt dev,
# with the share of sentences at `# confidence` >= 0.8 and their LAS. With STUDY=1, the rows
# each fit learns from (examples/confidence_rows.rs) and scripts/confidence-study.py's table of
# what each signal and input adds (numpy, in a venv under OUT).
#   usage: [OUT=DIR] [EN_MODEL=M] [STUDY=1] scripts/confidence-eval.sh TREEBANK=MODEL...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud"
[ -d "$ud" ] || { echo "skipped: $ud is absent" >&2; exit 0; }
out=${OUT:-$root/target/confidence-eval}
mkdir -p "$out"
cargo build --release --manifest-path "$root/Cargo.toml" --examples 2>/dev/null
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"

# split TB: OUT/TB.a.conllu and OUT/TB.b.conllu, alternate documents (or paragraphs).
split() {
  python3 - "$ud/$1/dev.conllu.zst" "$out/$1" <<'PY'
import subprocess, sys
text = subprocess.run(["zstd", "-dc", sys.argv[1]], capture_output=True, text=True, check=True).stdout
sents = [s for s in text.split("\n\n") if s.strip()]
marker = next((m for m in ("# newdoc", "# newpar") if sum(m in s for s in sents) >= 10), None)
groups = []
for s in sents:
    # Without documents or paragraphs marked: runs of ten sentences.
    if not groups or (marker in s if marker else len(groups[-1]) >= 10):
        groups.append([])
    groups[-1].append(s)
for half in "ab":
    part = [s for i, g in enumerate(groups) if "ab"[i % 2] == half for s in g]
    part[0] = part[0] if "# newdoc" in part[0] else "# newdoc\n" + part[0]
    open(f"{sys.argv[2]}.{half}.conllu", "w").write("\n\n".join(part) + "\n\n")
PY
}
# row NAME GOLD SYSTEM: one line of figures.
row() {
  "$sp" eval "$2" "$3" --calibration --json | python3 -c '
import json, re, sys, collections
d = json.load(sys.stdin); c = d["calibration"]; k = c["words_kept"]
cov = {x["threshold"]: x for x in c["coverage"]}
confs = [float(x) for x in re.findall(r"Conf=([0-9.]+)", open(sys.argv[2]).read())]
unsure = [x for x in confs if x < 0.5]
floor = collections.Counter(unsure).most_common(1)[0][1] if unsure else 0
print("%-34s LAS %6.2f  ECE %.4f (chance %.4f)  kept 25/50/80 %6.2f %6.2f %6.2f  best %6.2f %6.2f %6.2f  floor %4d of %5d  >=0.8: %5.1f%% LAS %6.2f" % (
    sys.argv[1], d["aligned"]["las"]["f1"], c["arcs"]["ece"], c["arcs"]["ece_floor"], k[0]["las"], k[1]["las"], k[2]["las"],
    k[0]["best"], k[1]["best"], k[2]["best"], floor, len(unsure), cov[0.8]["kept"], cov[0.8]["las"]))' "$1" "$3"
}
parse() { "$sp" parse --model "$1" --threads 1 --overwrite --output "$3" "${@:4}" "$2" 2>/dev/null; }

for arg in "$@"; do
  tb=${arg%%=*} model=${arg#*=}
  split "$tb"
  for h in a b; do
    python3 "$root/scripts/conllu-to-raw.py" "$out/$tb.$h.conllu" >"$out/$tb.$h.txt"
  done
  for h in a b; do
    other=$([ $h = a ] && echo b || echo a)
    "$sp" calibrate --model "$model" --dev "$out/$tb.$other.conllu" --output "$out/$tb.fit-$other.model" --overwrite 2>/dev/null
    for when in before after; do
      m=$([ $when = before ] && echo "$model" || echo "$out/$tb.fit-$other.model")
      parse "$m" "$out/$tb.$h.txt" "$out/$tb.$h.$when.raw.conllu" --format raw
      parse "$m" "$out/$tb.$h.conllu" "$out/$tb.$h.$when.gold.conllu" --retag=always
      row "$tb.$h $when raw text" "$out/$tb.$h.conllu" "$out/$tb.$h.$when.raw.conllu"
      row "$tb.$h $when gold tokens" "$out/$tb.$h.conllu" "$out/$tb.$h.$when.gold.conllu"
    done
    [ -n "${STUDY:-}" ] && "$root/target/release/examples/confidence_rows" "$model" "$out/$tb.$h.conllu" >"$out/rows.$tb.$h.tsv"
  done
done

if [ -n "${EN_MODEL:-}" ]; then
  zstd -dc "$ud/en_ewt/dev.conllu.zst" >"$out/en_ewt.conllu"
  "$sp" calibrate --model "$EN_MODEL" --dev "$out/en_ewt.conllu" --output "$out/en_ewt.fit.model" --overwrite
  for tb in en_atis hu_szeged el_gdt; do
    zstd -dc "$ud/$tb/dev.conllu.zst" >"$out/$tb.conllu"
    if [ $tb = en_atis ]; then
      sed -n 's/^# text = //p' "$out/$tb.conllu" >"$out/$tb.txt"
      how=(--format raw --raw-sentences lines)
    else
      python3 "$root/scripts/conllu-to-raw.py" "$out/$tb.conllu" >"$out/$tb.txt"
      how=(--format raw)
    fi
    for when in before after; do
      m=$([ $when = before ] && echo "$EN_MODEL" || echo "$out/en_ewt.fit.model")
      parse "$m" "$out/$tb.txt" "$out/$tb.$when.unlike.conllu" "${how[@]}"
      row "$tb (en_ewt model) $when" "$out/$tb.conllu" "$out/$tb.$when.unlike.conllu"
    done
    [ -n "${STUDY:-}" ] && "$root/target/release/examples/confidence_rows" "$EN_MODEL" "$out/$tb.conllu" >"$out/unlike.$tb.tsv"
  done
  [ -n "${STUDY:-}" ] && "$root/target/release/examples/confidence_rows" "$EN_MODEL" "$out/en_ewt.conllu" >"$out/rows.en_ewt.full.tsv"
fi

if [ -n "${STUDY:-}" ]; then
  [ -x "$out/venv/bin/python" ] || { python3 -m venv "$out/venv" && "$out/venv/bin/pip" install -q numpy; }
  "$out/venv/bin/python" "$root/scripts/confidence-study.py" "$out"
fi
