#!/usr/bin/env bash
# The annotation loop under load (issue 14):
#  1. memory: one `spoolparse retrain --force` cycle on the full en_ewt train as retrain.base
#     plus ANNOTATIONS annotated sentences (en_ewt train sentences under new ids, so that they
#     count as distinct annotations), peak RSS from /usr/bin/time -v;
#  2. throughput: the daemon with PARSE_THREADS parse threads on COPIES copies of en_ewt train,
#     once with retraining off (idle) and once while a retraining cycle runs in its background
#     thread (the spool is dropped in only after the cycle has started, and the script checks
#     that the cycle was still running when the last file was done).
#   usage: scripts/retrain-load.sh MODEL [ANNOTATIONS=10000] [COPIES=40] [PARSE_THREADS=2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=$(realpath "${1:?usage: scripts/retrain-load.sh MODEL [ANNOTATIONS] [COPIES] [PARSE_THREADS]}")
annotations=${2:-10000}
copies=${3:-40}
threads=${4:-2}
ud="$root/../shared/data/ud/en_ewt"
[ -d "$ud" ] || { echo "$ud is missing" >&2; exit 1; }
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
calc() { awk "BEGIN { printf \"%.1f\", $1 }"; }
tmp=$(mktemp -d); trap 'pkill -KILL -P $$ spoolparse 2>/dev/null || true; rm -rf "$tmp"' EXIT
lscpu | grep -E "^Model name" || true
echo "cores: $(nproc)"

# ANNOTATIONS sentences of en_ewt train (cycled if more are asked), each under a fresh id.
annotated_file() {
  zstd -dc "$ud/train.conllu.zst" | awk -v want="$annotations" '
    BEGIN { RS = ""; ORS = "\n\n" }
    { s[n++] = $0 }
    END { for (i = 0; i < want; i++) { t = s[i % n]; sub(/# sent_id = [^\n]*/, "# sent_id = ann-" i, t); print t } }'
}

config() { # DIR ENABLED
  cat <<TOML
[paths]
spool = "$1/spool"
output = "$1/out"
model = "$model"
[parse]
threads = $threads
min_confidence = 0.9
[retrain]
enabled = $2
every = "1d"
base = ["$ud/train.conllu.zst"]
heldout = "$ud/dev.conllu.zst"
TOML
}

# --- 1. memory of one cycle ---------------------------------------------------------------
mkdir -p "$tmp/mem/spool/annotated"
annotated_file > "$tmp/mem/spool/annotated/corrections.conllu"
config "$tmp/mem" false > "$tmp/mem.toml"
echo "== retrain: en_ewt train ($(zstd -dc "$ud/train.conllu.zst" | grep -c '^$') sentences) + $annotations annotations"
/usr/bin/time -v "$sp" retrain --config "$tmp/mem.toml" --force > "$tmp/retrain.out" 2> "$tmp/retrain.err" || {
  cat "$tmp/retrain.err" >&2; exit 1; }
grep -iE 'decision|promoted|rejected|candidate' "$tmp/retrain.out" | head -5
rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/retrain.err")
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$tmp/retrain.err")
printf 'retrain cycle: peak RSS %.1f MB, wall %s\n' "$(calc "$rss / 1024")" "$wall"

# --- 2. daemon throughput, idle vs while retraining ----------------------------------------
words=$(zstd -dc "$ud/train.conllu.zst" | awk -F'\t' '$1 ~ /^[0-9]+$/' | wc -l)
run_daemon() { # NAME ENABLED -> prints words/s
  local d="$tmp/$1"
  mkdir -p "$d/spool/incoming" "$d/spool/annotated" "$d/src"
  for i in $(seq -w 1 "$copies"); do cp "$ud/train.conllu.zst" "$d/src/part$i.conllu.zst"; done
  config "$d" "$2" > "$d/c.toml"
  if [ "$2" = true ]; then annotated_file > "$d/spool/annotated/corrections.conllu"; fi
  "$sp" daemon --config "$d/c.toml" 2> "$d/daemon.log" &
  local pid=$!
  until grep -q 'watching' "$d/daemon.log" 2>/dev/null; do sleep 0.1; done
  if [ "$2" = true ]; then
    until grep -q 'retraining: a cycle is due' "$d/daemon.log"; do sleep 0.2; done
    sleep 2 # past reading the treebank, into training
  fi
  for f in "$d"/src/*.conllu.zst; do mv -T "$f" "$d/spool/incoming/${f##*/}"; done
  local start end
  start=$(date +%s.%N)
  until [ "$(grep -c 'spoolparse: done ' "$d/daemon.log")" -ge "$copies" ]; do sleep 0.1; done
  end=$(date +%s.%N)
  if [ "$2" = true ] && grep -q 'retraining: candidate' "$d/daemon.log"; then
    echo "warning: the retraining cycle ended before parsing did; use more COPIES" >&2
  fi
  kill -TERM "$pid"; wait "$pid" || true
  calc "$words * $copies / ($end - $start)"
}
echo "== daemon, $threads parse threads, $copies x en_ewt train ($((words * copies)) words)"
idle=$(run_daemon idle false)
echo "idle:             $idle words/s"
busy=$(run_daemon busy true)
echo "while retraining: $busy words/s ($(calc "100 * $busy / $idle")% of idle)"
grep 'retraining:' "$tmp/busy/daemon.log" | head -3
