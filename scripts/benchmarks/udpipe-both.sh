#!/usr/bin/env bash
# Both speed figures against UDPipe 1 in one run, so that no change loses speed unseen: whole
# processes, one thread, each round alternating ours and UDPipe's (a round's figure of ours is
# the mean of a run before and a run after UDPipe's, so that drift in the machine's speed falls
# on both sides):
#   - CoNLL-U: `spoolparse parse` of en_ewt dev x8 (~200k words, gold tokens and tags) with
#     CONLLU_MODEL, against UDPipe 1's greedy parser on the same file (the model of
#     ../shared/tools/udpipe-speed.sh, in its cache);
#   - raw text: `spoolparse parse` of the raw text of TREEBANK's dev x4 (rebuilt from `# text`, a
#     blank line at each `# newdoc`/`# newpar`) with RAW_MODEL (tokenizer, tagger, FEATS,
#     lemmas, parser, confidence), against UDPipe 1's whole greedy pipeline (tokenizer, tagger,
#     parser: scripts/udpipe-raw.py's model of TREEBANK, trained into the cache if missing);
#   - the serial fraction of each of our runs (parse's `busy:` line: reading and writing, one
#     thread at a time) and the speed-up it allows on 16 cores.
# Words are the gold file's (raw text yields about as many). Prints each round and the medians.
#   usage: [ROUNDS=3] [TREEBANK=hu_szeged] [UDPIPE_CACHE=DIR] scripts/benchmarks/udpipe-both.sh CONLLU_MODEL RAW_MODEL [BINARY]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { sed -n 2,17p "$0" >&2; exit 2; }
conllu_model=$1; raw_model=$2
bin=${3:-$root/target/release/spoolparse}
rounds=${ROUNDS:-3}; treebank=${TREEBANK:-hu_szeged}
shared="$root/../shared"; ud="$shared/data/ud"
[ -d "$ud/en_ewt" ] && [ -d "$ud/$treebank" ] || { echo "skipped: $ud/en_ewt or $ud/$treebank is absent" >&2; exit 0; }
cache=${UDPIPE_CACHE:-$HOME/.cache/udpipe-peer}
mkdir -p "$cache/raw"
py=python3; "$py" -c "import ufal.udpipe" 2>/dev/null || pip install -q ufal.udpipe
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# The inputs, and UDPipe's two models (the parser-only one of udpipe-speed.sh, which trains it).
conllu_words=$("$root/scripts/benchmarks/dev8-inputs.sh" "$tmp")
[ -s "$cache/en_ewt.udpipe" ] || "$shared/tools/udpipe-speed.sh" "$cache" >/dev/null
for _ in 1 2 3 4; do zstd -dc "$ud/$treebank/dev.conllu.zst"; done > "$tmp/raw4.conllu"
awk '/^# newdoc/ || /^# newpar/ { if (n) print ""; } /^# text = / { sub(/^# text = /, ""); print; n = 1 }' \
  "$tmp/raw4.conllu" > "$tmp/raw4.txt"
raw_words=$(awk -F'\t' '$1 ~ /^[0-9]+$/' "$tmp/raw4.conllu" | wc -l)
if [ ! -s "$cache/raw/$treebank.udpipe" ]; then
  zstd -dc "$ud/$treebank/train.conllu.zst" > "$cache/raw/$treebank-train.conllu"
  "$py" "$root/scripts/udpipe-raw.py" train "$cache/raw/$treebank-train.conllu" "$cache/raw/$treebank.udpipe"
fi
lscpu | grep -E "^Model name" || true
echo "CoNLL-U: en_ewt dev x8, $conllu_words words, $conllu_model; raw text: $treebank dev x4, $raw_words words, $raw_model; $rounds rounds"
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }
whole() { awk "BEGIN { printf \"%.0f\", $1 }"; }
# ours NAME MODEL INPUT WORDS [ARGS...]: words/s of one whole parse on one thread; its serial
# fraction goes to $tmp/NAME.serial.
ours() {
  local name=$1 model=$2 input=$3 words=$4 s e; shift 4
  s=$(date +%s.%N)
  "$bin" parse --threads 1 --model "$model" "$@" "$input" --output "$tmp/out.conllu" --overwrite 2>"$tmp/log"
  e=$(date +%s.%N)
  grep -oE 'serial [0-9.]+%' "$tmp/log" | grep -oE '[0-9.]+' >> "$tmp/$name.serial"
  whole "$words / ($e - $s)"
}
# UDPipe's greedy parser on the CoNLL-U, as one whole process (interpreter start and model load
# included, as udpipe-speed.sh's whole-process line).
udpipe_conllu() {
  "$py" - "$cache/en_ewt.udpipe" "$tmp/dev8.conllu" "$conllu_words" <<'PY'
import sys, time
t = time.perf_counter()
import ufal.udpipe as u
model = u.Model.load(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
u.Pipeline(model, "conllu", "none", "beam_search=1", "conllu").process(text, u.ProcessingError())
print(f"{int(sys.argv[3]) / (time.perf_counter() - t):.0f}")
PY
}
udpipe_raw() {
  local seconds
  seconds=$("$py" "$root/scripts/udpipe-raw.py" run "$cache/raw/$treebank.udpipe" "$tmp/raw4.txt" "$tmp/udpipe.conllu" raw-greedy)
  whole "$raw_words / $seconds"
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
conllu_ratios=(); raw_ratios=()
for round in $(seq "$rounds"); do
  a=$(ours conllu "$conllu_model" "$tmp/dev8.conllu" "$conllu_words")
  b=$(ours raw "$raw_model" "$tmp/raw4.txt" "$raw_words" --format raw)
  peer_conllu=$(udpipe_conllu)
  peer_raw=$(udpipe_raw)
  b=$(whole "($b + $(ours raw "$raw_model" "$tmp/raw4.txt" "$raw_words" --format raw)) / 2")
  a=$(whole "($a + $(ours conllu "$conllu_model" "$tmp/dev8.conllu" "$conllu_words")) / 2")
  rc=$(calc "$a / $peer_conllu"); rr=$(calc "$b / $peer_raw")
  echo "round $round: CoNLL-U $a words/s against UDPipe's greedy parser $peer_conllu (${rc}x); raw text $b against UDPipe's greedy pipeline $peer_raw (${rr}x)"
  conllu_ratios+=("$rc"); raw_ratios+=("$rr")
done
serial() { median $(cat "$tmp/$1.serial"); }
allows() { calc "1 / ($1 / 100 + (1 - $1 / 100) / 16)"; }
echo "median: CoNLL-U, one thread, $(median "${conllu_ratios[@]}")x UDPipe 1's greedy parser (bar 5.5x); raw text, one thread, $(median "${raw_ratios[@]}")x UDPipe 1's greedy pipeline (bar 16x)"
echo "serial fraction (median): CoNLL-U $(serial conllu)%, allowing $(allows "$(serial conllu)")x on 16 cores; raw text $(serial raw)%, allowing $(allows "$(serial raw)")x"
