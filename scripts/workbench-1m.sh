#!/usr/bin/env bash
# The workbench with about a million low-confidence sentences queued (issue 29): en_ewt train
# parsed COPIES times (80: 1.0M sentences; each copy's first words marked with its number, so
# that no copy is a duplicate of another) into COPIES lowconf files, every word flagged
# (--min-confidence 1), as a daemon's lowconf/ would hold them after COPIES input files. Then
# `spoolparse annotate` on them: the time until the whole queue is built, its RSS, and the
# latency of GET /api/next, POST /api/reparse and POST /api/answer (p50, p99) on loopback, with
# every task answered (its checked words confirmed, or every other task's first one moved to
# an alternative head), so that the queue re-ranks itself as it does for a real annotator.
#   usage: scripts/workbench-1m.sh MODEL [COPIES]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=$(realpath "$1"); copies=${2:-80}
bin="$root/target/release/spoolparse"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
tmp=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/out/lowconf"
zstd -dc "$root/../shared/data/ud/en_ewt/train.conllu.zst" > "$tmp/train.conllu"
for k in $(seq 1 "$copies"); do
  awk -v k="$k" 'BEGIN { FS = OFS = "\t" } $1 == "1" && NF == 10 { $2 = $2 "~" k } { print }' "$tmp/train.conllu" > "$tmp/copy.conllu"
  "$bin" parse --model "$model" "$tmp/copy.conllu" --output /dev/null --min-confidence 1 \
    --rejected "$tmp/out/lowconf/copy$k.conllu.zst" 2>/dev/null
done
printf '[paths]\nspool = "%s/spool"\noutput = "%s/out"\nmodel = "%s"\n' "$tmp" "$tmp" "$model" > "$tmp/cfg.toml"
start=$(date +%s.%N)
"$bin" annotate --config "$tmp/cfg.toml" --listen 127.0.0.1:0 2> "$tmp/log" & pid=$!
until grep -q "workbench on http://" "$tmp/log"; do sleep 0.1; done
url=$(sed -n 's|.*workbench on \(http://[^/]*\)/.*|\1|p' "$tmp/log" | head -1)
python3 - "$url" "$pid" "$start" "$copies" <<'EOF'
import json, sys, time, urllib.error, urllib.request
url, pid, start, copies = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
stats = lambda: json.load(urllib.request.urlopen(url + "/api/stats"))
# The queue is built when every file has been scanned: its count stops moving for 3 s.
last, still = -1, 0
while still < 3:
    time.sleep(1)
    q = stats()["queued"] + stats()["duplicates"]
    still = still + 1 if q == last and q > 0 else 0
    last = q
built = time.time() - start - 3
rss = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
s = stats()
def timed(req):
    t = time.perf_counter()
    r = urllib.request.urlopen(req)
    body = r.read()
    return time.perf_counter() - t, body
post = lambda path, body: urllib.request.Request(url + path, json.dumps(body).encode(),
                                                 {"Content-Type": "application/json"})
nexts, reparses, answers = [], [], []
for i in range(1000):
    dt, body = timed(url + "/api/next")
    nexts.append(dt)
    task = json.loads(body)
    checked = [w for w in task["words"] if w["check"]]
    arcs = [{"id": w["id"], "head": w["head"], "deprel": w["deprel"]} for w in checked]
    w = next((w for w in checked if w["alternatives"]), None)
    if w and i % 2 == 0:
        alt = w["alternatives"][0]
        arcs = [a for a in arcs if a["id"] != w["id"]] + [{"id": w["id"], "head": alt["head"], "deprel": alt["deprel"]}]
        if i % 5 == 0:
            reparses.append(timed(post("/api/reparse", {"task": task["task"], "arcs": arcs[-1:]}))[0])
    try:
        answers.append(timed(post("/api/answer", {"task": task["task"], "arcs": arcs, "whole": False}))[0])
    except urllib.error.HTTPError:  # an alternative that no tree holds with the rest
        urllib.request.urlopen(post("/api/skip", {"task": task["task"]}))
pct = lambda xs, p: 1000 * sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]
rss_after = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
print(f"{copies} lowconf files: {s['queued']} sentences queued ({s['duplicates']} duplicates counted), "
      f"queue built in {built:.1f} s, RSS {rss} MB then (after 1,000 tasks: {rss_after} MB)")
print(f"GET /api/next: p50 {pct(nexts, 0.5):.1f} ms, p99 {pct(nexts, 0.99):.1f} ms ({len(nexts)} calls); "
      f"POST /api/reparse: p50 {pct(reparses, 0.5):.1f} ms, p99 {pct(reparses, 0.99):.1f} ms ({len(reparses)} calls); "
      f"POST /api/answer: p50 {pct(answers, 0.5):.1f} ms, p99 {pct(answers, 0.99):.1f} ms ({len(answers)} calls)")
EOF
