#!/usr/bin/env bash
# Daemon throughput and peak RSS on a spool of ~1M sentences (en_ewt train x COPIES, one
# .conllu.zst file per copy), against `spoolparse parse` on the same files with the same
# threads and threshold. Prints words/s of both and the daemon's peak RSS.
#   usage: scripts/daemon-throughput.sh MODEL [COPIES=80] [THREADS=2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=$(realpath "${1:?usage: scripts/daemon-throughput.sh MODEL [COPIES] [THREADS]}")
copies=${2:-80}
threads=${3:-2}
train="$root/../shared/data/ud/en_ewt/train.conllu.zst"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
calc() { awk "BEGIN { printf \"%.1f\", $1 }"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/spool/incoming" "$tmp/src"
for i in $(seq -w 1 "$copies"); do cp "$train" "$tmp/src/part$i.conllu.zst"; done
words=$(zstd -dc "$train" | awk -F'\t' '$1 ~ /^[0-9]+$/' | wc -l)
sentences=$(zstd -dc "$train" | grep -c '^$')
echo "spool: $copies files, $((sentences * copies)) sentences, $((words * copies)) words; $threads threads"
lscpu | grep -E "^Model name" || true

start=$(date +%s.%N)
"$sp" parse --model "$model" --threads "$threads" --min-confidence 0.9 --rejected "$tmp/rejected.conllu.zst" \
  --output "$tmp/accepted.conllu.zst" "$tmp"/src/*.conllu.zst 2>/dev/null
end=$(date +%s.%N)
parse_wps=$(calc "$words * $copies / ($end - $start)")
printf 'spoolparse parse:  %.0f words/s (%.1f s)\n' "$parse_wps" "$(calc "$end - $start")"

cat > "$tmp/c.toml" <<TOML
[paths]
spool = "$tmp/spool"
output = "$tmp/out"
model = "$model"
[parse]
threads = $threads
min_confidence = 0.9
[queues]
readers = ${READERS:-1}
TOML
mv "$tmp"/src/*.conllu.zst "$tmp/spool/incoming/"
start=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$tmp/rss" "$sp" daemon --config "$tmp/c.toml" 2>"$tmp/daemon.log" &
pid=$!
until [ "$(grep -c 'spoolparse: done ' "$tmp/daemon.log")" -ge "$copies" ]; do sleep 0.1; done
end=$(date +%s.%N)
pkill -TERM -P "$pid" spoolparse || true
wait "$pid"
daemon_wps=$(calc "$words * $copies / ($end - $start)")
printf 'spoolparse daemon: %.0f words/s (%.1f s, start-up included), %.1f%% of parse; peak RSS %.1f MB (model %.1f MB)\n' \
  "$daemon_wps" "$(calc "$end - $start")" "$(calc "100 * $daemon_wps / $parse_wps")" \
  "$(calc "$(cat "$tmp/rss") / 1024")" "$(calc "$(stat -c %s "$model") / 1048576")"
grep -c 'spoolparse: done ' "$tmp/daemon.log" | sed 's/^/files done: /'
