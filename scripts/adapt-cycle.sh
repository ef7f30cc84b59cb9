#!/usr/bin/env bash
# One retraining cycle on a new domain (issue 30, docs/annotation.md#adapting-to-your-own-text):
# a config in OUT/NAME with retrain.base en_ewt train (BASE), retrain.heldout en_ewt dev (HELDOUT), every
# annotation trained on (annotation_heldout = 0) and every candidate scored, promoted or not
# (`retrain --keep-rejected`), plus the [retrain] lines KEYS; ANNOTATIONS dropped into
# annotated/; `spoolparse retrain --force --json` under /usr/bin/time -v (OUT/NAME/report.json,
# log.txt); then the candidate parses GOLD_DEV (--retag) and `spoolparse eval` scores it.
# Prints LAS and UPOS on GOLD_DEV, the held-out file's LAS (HELDOUT) before -> after, training seconds and peak RSS.
#   usage: scripts/adapt-cycle.sh NAME ANNOTATIONS GOLD_DEV "KEYS" (env: MODEL, OUT, BIN, UD, BASE, HELDOUT)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
name=${1:?usage: scripts/adapt-cycle.sh NAME ANNOTATIONS GOLD_DEV KEYS}
annotations=$(realpath "$2")
gold_dev=$(realpath "$3")
keys=${4:-}
bin=${BIN:-$root/target/release/spoolparse}
ud=$(realpath "${UD:-$root/../shared/data/ud}")
model=$(realpath "${MODEL:-$root/runs/daemon/en_ewt.model}")
base=$(realpath "${BASE:-$ud/en_ewt/train.conllu.zst}")
heldout=$(realpath "${HELDOUT:-$ud/en_ewt/dev.conllu.zst}")
dir=${OUT:-/tmp/adapt}/$name
rm -rf "$dir"
mkdir -p "$dir/spool/annotated"
cat > "$dir/config.toml" <<EOC
[paths]
spool = "$dir/spool"
output = "$dir/out"
model = "$model"
[retrain]
base = ["$base"]
heldout = "$heldout"
max_las_drop = 100.0
annotation_heldout = 0.0
keep_models = 2
$keys
EOC
cp "$annotations" "$dir/spool/annotated/.a.conllu"
mv "$dir/spool/annotated/.a.conllu" "$dir/spool/annotated/a.conllu"
/usr/bin/time -v nice -n 5 "$bin" retrain --config "$dir/config.toml" --force --json --keep-rejected "$dir/rejected" \
  > "$dir/report.json" 2> "$dir/log.txt" || true
# Promoted or not (without held-out annotations the gate allows no loss on the held-out file).
# (ls fails when one of the two globs matches nothing: under pipefail that would end the script.)
candidate=$( (ls "$dir"/spool/models/retrained-*.model "$dir"/rejected/retrained-*.model 2>/dev/null || true) | head -1)
[ -n "$candidate" ] || { echo "$dir: no candidate (see $dir/log.txt)" >&2; exit 1; }
"$bin" parse --model "$candidate" --retag --output "$dir/dev.conllu" "$gold_dev" 2>/dev/null
"$bin" eval "$gold_dev" "$dir/dev.conllu" > "$dir/eval.txt"
python3 - "$dir" <<'EOP'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/report.json"))
ev = {l.split("|")[0].strip(): l.split("|")[-1].strip() for l in open(f"{d}/eval.txt") if "|" in l}
rss = [l.split(":")[-1].strip() for l in open(f"{d}/log.txt") if "Maximum resident" in l]
print(f"{d}: LAS {ev.get('LAS')} UPOS {ev.get('UPOS')}; held-out {r['current']['heldout_las']:.2f} -> "
      f"{r['candidate']['heldout_las']:.2f}; train {r['train_seconds']:.0f} s; peak RSS {rss[0] if rss else '?'} kB")
EOP
