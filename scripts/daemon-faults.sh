#!/usr/bin/env bash
# Measures what issue 13's production faults were about, on the daemon as a user runs it:
#  1. CPU used by an idle daemon (empty spool, inotify on, then off) over SECONDS;
#  2. peak RSS (VmHWM) of the daemon idle, and after a file with one 64 MB line and after a
#     300,000-token line of text (and how long those files took);
#  3. peak RSS of `spoolparse parse` on the 64 MB line;
#  4. files written straight into incoming/ without a rename (issue 28), as `cp` does: one in 20
#     pieces 0.2 s apart, one that pauses PAUSE s (default 10) halfway. Every sentence must reach
#     the outputs exactly once (sentences in, accepted + lowconf out), and the wait be logged.
#   usage: scripts/daemon-faults.sh MODEL [SECONDS [PAUSE]]   (MODEL needs a tagger for the text file)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=$(realpath "${1:?usage: scripts/daemon-faults.sh MODEL [SECONDS]}")
seconds=${2:-60}
pause=${3:-10}
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
ticks=$(getconf CLK_TCK)

config() { # inotify
  cat > "$tmp/cfg.toml" <<EOF
[paths]
spool = "$tmp/spool"
output = "$tmp/out"
model = "$model"
[watch]
inotify = $1
rescan_seconds = 5
[metrics]
file = "$tmp/m.prom"
EOF
}
cpu_ms() { awk -v t="$ticks" '{print int(($14 + $15) * 1000 / t)}' "/proc/$1/stat"; }
hwm() { awk '/VmHWM/ {print $2 " kB"}' "/proc/$1/status"; }
wait_done() { # name
  for _ in $(seq 600); do [ -e "$tmp/spool/done/$1" ] || [ -e "$tmp/spool/failed/$1" ] && return; sleep 0.1; done
  echo "$1 not finished" >&2; exit 1
}

for inotify in true false; do
  rm -rf "$tmp/spool" "$tmp/out"; config $inotify
  "$sp" daemon --config "$tmp/cfg.toml" 2>"$tmp/log" & pid=$!
  sleep 2
  a=$(cpu_ms $pid); sleep "$seconds"; b=$(cpu_ms $pid)
  echo "idle daemon, inotify=$inotify: $((b - a)) ms of CPU in $seconds s; peak RSS $(hwm $pid)"
  if [ $inotify = true ]; then
    python3 - "$tmp" <<'EOF'
import sys
d = sys.argv[1]
with open(f"{d}/line.conllu", "w") as f:
    f.write("1\t" + "x" * (64 << 20) + "\t_\tX\t_\t_\t_\t_\t_\t_\n\n1\tok\t_\tX\t_\t_\t_\t_\t_\t_\n\n")
with open(f"{d}/tokens.txt", "w") as f:
    f.write(" ".join(f"w{i}" for i in range(300000)) + "\nnext line\n")
EOF
    for f in line.conllu tokens.txt; do
      start=$(date +%s.%N)
      cp "$tmp/$f" "$tmp/spool/incoming/.$f" && mv "$tmp/spool/incoming/.$f" "$tmp/spool/incoming/$f"
      wait_done $f
      end=$(date +%s.%N)
      echo "daemon after $f ($(du -h "$tmp/$f" | cut -f1)): peak RSS $(hwm $pid), $(echo "$end - $start" | bc) s from drop to done"
      grep "done $f" "$tmp/log" | sed 's/^/  log: /'
    done
  fi
  kill -TERM $pid; wait $pid || true
done
/usr/bin/time -f "parse of the 64 MB line: peak RSS %M kB, %e s (exit status %x)" \
  "$sp" parse --model "$model" "$tmp/line.conllu" --output /dev/null 2>&1 | tail -2 || true  # it fails: the line is malformed

# 4. Written straight into incoming/: en_ewt dev if the treebanks are beside the repository,
# else the fixture, repeated.
rm -rf "$tmp/spool" "$tmp/out"; config true
dev="$root/../shared/data/ud/en_ewt/dev.conllu.zst"
if [ -f "$dev" ]; then zstd -dcq "$dev" > "$tmp/w.conllu"; else
  for _ in $(seq 200); do cat "$root/tests/fixtures/special.conllu"; done > "$tmp/w.conllu"; fi
"$sp" daemon --config "$tmp/cfg.toml" 2>"$tmp/log" & pid=$!
sleep 1
write() { # SOURCE DEST PIECES PAUSE: one open file, PIECES writes with PAUSE s between them
  python3 - "$@" <<'EOF'
import sys, time
src, dst, pieces, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
data = open(src, "rb").read()
size = -(-len(data) // pieces)
with open(dst, "wb", buffering=0) as f:
    for i in range(pieces):
        if i:
            time.sleep(pause)
        f.write(data[i * size:(i + 1) * size])
EOF
}
write "$tmp/w.conllu" "$tmp/spool/incoming/slow.conllu" 20 0.2 & w1=$!
write "$tmp/w.conllu" "$tmp/spool/incoming/paused.conllu" 2 "$pause" & w2=$!
wait $w1 $w2
for f in slow.conllu paused.conllu; do
  wait_done $f
  in=$(grep -c '^$' "$tmp/w.conllu")
  out=$(zstd -dcq "$tmp/out/accepted/$f.zst" "$tmp/out/lowconf/$f.zst" | grep -c '^$')
  echo "written straight into incoming/: $f: $in sentences in, $out out (accepted + lowconf)"
  grep -E "waiting for incoming/$f|done $f" "$tmp/log" | sed 's/^/  log: /'
done
kill -TERM $pid; wait $pid || true
