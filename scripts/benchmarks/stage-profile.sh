#!/usr/bin/env bash
# Where a parse's time goes, stage by stage: `perf record` (the cpu-clock software event, which
# this VM has where it has no hardware counters) with DWARF call stacks of one whole
# `spoolparse parse` on one thread, then the share of samples under each stage (tokenizer,
# tagger, FEATS, lemmas, parser, confidence, the language check) and the functions that took
# most samples themselves. Time, not instructions: callgrind (scripts/benchmarks/instructions.sh)
# counted the lemmatizer's affix comparisons at 0.6% of a raw parse's instructions, where they
# took 11% of its time (docs/operations.md, "Where the time goes"). INPUT=raw (default) parses
# TREEBANK's dev x4 as raw text (the model needs a tokenizer), INPUT=conllu its CoNLL-U.
#   usage: [INPUT=raw|conllu] [TREEBANK=en_ewt] [TOP=15] scripts/benchmarks/stage-profile.sh MODEL BINARY
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { sed -n 2,9p "$0" >&2; exit 2; }
model=$1; bin=$2
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
dev="$root/../shared/data/ud/${TREEBANK:-en_ewt}/dev.conllu.zst"
[ -f "$dev" ] || { echo "skipped: $dev is absent" >&2; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for _ in 1 2 3 4; do zstd -dcq "$dev"; done > "$tmp/dev4.conllu"
case "${INPUT:-raw}" in
  raw) python3 "$root/scripts/conllu-to-raw.py" "$tmp/dev4.conllu" > "$tmp/input"; format=(--format raw) ;;
  conllu) cp "$tmp/dev4.conllu" "$tmp/input"; format=() ;;
  *) echo "INPUT is raw or conllu" >&2; exit 2 ;;
esac
perf record -q -e cpu-clock -F 2000 --call-graph dwarf,16384 -o "$tmp/perf.data" \
  "$bin" parse --model "$model" --threads 1 "${format[@]}" "$tmp/input" --output "$tmp/out.conllu" --overwrite \
  2> "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
grep -E '^parsed' "$tmp/log" || true
perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null > "$tmp/stacks"
python3 - "$tmp/stacks" "${TOP:-15}" <<'PY'
import collections, re, sys
# A sample belongs to the first stage (innermost first) whose function is on its stack.
STAGES = [
    ("tokenizer", re.compile(r"tokenizer::Workspace::(classify|decide)|raw::split::Splitter")),
    ("tagger", re.compile(r"tagger::Tagger<.*>::tag")),
    ("FEATS", re.compile(r"feats::FeatsTagger<.*>::tag")),
    ("lemmas", re.compile(r"lemmatizer::Lemmatizer<.*>::lemma")),
    ("confidence", re.compile(r"parse::confidence::|TransitionScores::probability")),
    ("parser", re.compile(r"parser::Parser<.*>::(parse|decode)")),
    ("language check", re.compile(r"parse::fit::")),
    ("reading", re.compile(r"batch::read_text|Reader<.*>::read|PipelineOptions::read")),
    ("writing", re.compile(r"render::|Sentence::write_to|write_all")),
]
stages, own, total = collections.Counter(), collections.Counter(), 0
for sample in open(sys.argv[1]).read().split("\n\n"):
    frames = [re.sub(r"^\s*[0-9a-f]+\s+", "", line).strip() for line in sample.strip().splitlines()]
    frames = [f for f in frames if f]
    if not frames:
        continue
    total += 1
    # The innermost frame that is a function of its own (perf lists inlined calls above it).
    outer = next((f for f in frames if not f.endswith("(inlined)")), frames[0])
    own[re.sub(r"::h[0-9a-f]{16}$", "", outer)] += 1
    stage = next((name for f in frames for name, pattern in STAGES if pattern.search(f)), "other")
    stages[stage] += 1
print(f"{total} samples (one per 0.5 ms)")
print("stage            share")
for name, n in stages.most_common():
    print(f"{name:<16} {100 * n / total:5.1f}%")
print(f"functions by their own samples, inlined calls included (top {sys.argv[2]})")
for name, n in own.most_common(int(sys.argv[2])):
    print(f"{100 * n / total:5.1f}%  {name[:110]}")
PY
