#!/usr/bin/env bash
# Throughput of the Spark job (`python -m spoolparse.spark` on local[2]) against
# `spoolparse parse --threads 2` on the same data: en_ewt train copied COPIES times (default 80:
# 1,003,520 sentences) into as many .conllu.zst files in a temporary directory (never in the
# repository), each run splitting by the same --min-confidence into zstd outputs. Each time is
# the whole command's wall time (Spark's includes starting its JVM, the CLI's opening the model);
# the Spark job's own time (from its manifest) is printed too. ROUNDS (default 1) alternates the
# two; the best time of each is compared. Then checks that both wrote the same sentences, byte
# for byte (decompressed, in input order). Measure on a quiet machine.
#   usage: scripts/spark-bench.sh MODEL [COPIES] [MIN_CONFIDENCE]    (ROUNDS=3 scripts/spark-bench.sh ...)
set -euo pipefail
model=$(realpath "$1")
copies=${2:-80}
threshold=${3:-0.8}
rounds=${ROUNDS:-1}
source "$(dirname "$0")/python-env.sh"
train=$root/../shared/data/ud/en_ewt/train.conllu.zst
[ -f "$train" ] || { echo "$train not found: the benchmark needs the shared treebanks" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/in"
for i in $(seq -w 1 "$copies"); do cp "$train" "$tmp/in/en_ewt-$i.conllu.zst"; done
sentences=$(( $(zstd -dc "$train" | grep -c '^$') * copies ))
echo "input: $copies files, $sentences sentences; model $model; --min-confidence $threshold; $(nproc) cores"
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
best_cli=; best_spark=
for round in $(seq 1 "$rounds"); do
  rm -rf "$tmp/cli" "$tmp/spark"; mkdir "$tmp/cli"
  t0=$(now)
  "$bin" parse --model "$model" "$tmp"/in/*.conllu.zst --threads 2 --min-confidence "$threshold" \
    --output "$tmp/cli/accepted.conllu.zst" --rejected "$tmp/cli/lowconf.conllu.zst" 2>"$tmp/cli.log" ||
    { cat "$tmp/cli.log" >&2; exit 1; }
  t1=$(now)
  "$venv/bin/python" -m spoolparse.spark --master 'local[2]' --model "$model" --input "$tmp/in/*.conllu.zst" \
    --output "$tmp/spark" --min-confidence "$threshold" 2>"$tmp/spark.log" ||
    { cat "$tmp/spark.log" >&2; exit 1; }
  t2=$(now)
  cli=$(calc "$t1 - $t0"); spark=$(calc "$t2 - $t1")
  job=$("$venv/bin/python" -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" "$tmp/spark/_manifest.json")
  printf 'round %d: spoolparse parse --threads 2: %.2f s; Spark local[2]: %.2f s (job %.2f s)\n' "$round" "$cli" "$spark" "$job"
  if [ -z "$best_cli" ] || (( $(awk "BEGIN { print ($cli < $best_cli) }") )); then best_cli=$cli; fi
  if [ -z "$best_spark" ] || (( $(awk "BEGIN { print ($spark < $best_spark) }") )); then best_spark=$spark; best_job=$job; fi
done
tail -1 "$tmp/cli.log"
tail -1 "$tmp/spark.log"
printf 'best: spoolparse parse %.2f s (%.0f sentences/s); Spark %.2f s (%.0f sentences/s; job alone %.2f s)\n' \
  "$best_cli" "$(calc "$sentences / $best_cli")" "$best_spark" "$(calc "$sentences / $best_spark")" "$best_job"
printf 'overhead of Spark: %+.1f%% (whole command), %+.1f%% (job alone)\n' \
  "$(calc "($best_spark / $best_cli - 1) * 100")" "$(calc "($best_job / $best_cli - 1) * 100")"
# Same bytes: the CLI's one stream against Spark's files in input order (the manifest's).
parts() { "$venv/bin/python" -c "
import json, sys
m = json.load(open(sys.argv[1] + '/_manifest.json'))
print('\n'.join(sys.argv[1] + '/' + s[sys.argv[2]] for e in m['inputs'] for s in e['shards']))" "$tmp/spark" "$1"; }
for kind in accepted lowconf; do
  if cmp -s <(zstd -dc "$tmp/cli/$kind.conllu.zst") <(parts "$kind" | xargs zstd -dc); then
    echo "$kind: identical"
  else
    echo "$kind: DIFFERENT" >&2; exit 1
  fi
done
