#!/usr/bin/env bash
# Static oracle (Algorithm 2) vs dynamic oracle with exploration (Algorithm 3) on the three
# shared treebanks, 15 epochs each, gold tags; prints a Markdown table of dev UAS/LAS.
#   usage: scripts/compare-oracles.sh [OUT_DIR]   (default: runs/oracles)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ud="$root/../shared/data/ud"
out=${1:-$root/runs/oracles}
mkdir -p "$out"
cargo build --release --manifest-path "$root/Cargo.toml"
sp="$root/target/release/spoolparse"
for tb in en_ewt el_gdt hu_szeged; do
  for oracle in static dynamic; do
    "$sp" train --train "$ud/$tb/train.conllu.zst" --dev "$ud/$tb/dev.conllu.zst" \
      --output "$out/$tb.$oracle.model" --overwrite --oracle "$oracle" --epochs 15 2> "$out/$tb.$oracle.train.log"
    "$sp" parse --model "$out/$tb.$oracle.model" "$ud/$tb/dev.conllu.zst" --output "$out/$tb.$oracle.dev.conllu" --overwrite 2>/dev/null
    "$sp" eval "$ud/$tb/dev.conllu.zst" "$out/$tb.$oracle.dev.conllu" --json > "$out/$tb.$oracle.json"
  done
done
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
print("| treebank | oracle | UAS | LAS | UAS no punct | LAS no punct |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
gain = []
for tb in ("en_ewt", "el_gdt", "hu_szeged"):
    r = {o: json.load(open(os.path.join(out, f"{tb}.{o}.json"))) for o in ("static", "dynamic")}
    for o in ("static", "dynamic"):
        s = r[o]
        print(f"| {tb} | {o} | {s['uas']:.2f} | {s['las']:.2f} | {s['uas_no_punct']:.2f} | {s['las_no_punct']:.2f} |")
    gain.append(r["dynamic"]["las"] - r["static"]["las"])
print(f"\nmean LAS gain of the dynamic oracle: {sum(gain) / len(gain):+.2f}")
PY
