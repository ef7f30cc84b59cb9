#!/usr/bin/env bash
# The whole analysis from raw text (issues 31 and 37), against the peer UDPipe 1 does it: for
# each treebank, the dev set's raw text (scripts/conllu-to-raw.py: `# text` by paragraph from
# `# newdoc`/`# newpar`) is tokenized, tagged, lemmatized and parsed by
#   - UDPipe 1 (scripts/udpipe-raw.py: a whole model, its own tokenizer, tagger, lemmatizer and
#     parser, trained on the train split with the options that script names; cached in
#     UDPIPE_CACHE), with its default beam search and greedy (beam_search=1);
#   - spoolparse, for each TREEBANK=MODEL argument (a treebank may have several; the rows are
#     named by the model file's name): `spoolparse parse --format raw --threads 1` (skipped,
#     saying why, when this build or the model has no tokenizer);
# and the same systems analyze and parse the dev set's gold tokens (UDPipe from CoNLL-U,
# spoolparse with --retag=always). Scored by the official evaluator
# (../shared/tools/conll18_ud_eval.py, F1 over aligned words): Tokens, Sentences and Words from
# raw text, then UPOS, UFeats, AllTags, Lemmas, LAS, MLAS, BLEX; "unseen" is lemma accuracy on
# the gold-token words whose lowercased form the train split does not have; "kept at 95%" is
# the largest share of the gold-token words that sentences taken by falling `# confidence`
# keep at LAS 95% or more (head and universal label), for outputs that have the comment. From raw text
# `spoolparse eval` must agree with the evaluator on LAS (checked; the run fails otherwise).
# words/s: gold dev words over the wall time of one whole process from raw text (interpreter
# start and model load included), one thread; machines shared with other work make it noisy.
# Outputs stay in OUT (default target/raw-text-eval); the tables printed hold every treebank
# measured there, the last measurement of each.
#   usage: [TREEBANKS="hu_szeged el_gdt en_ewt en_atis"] [OUT=DIR] [UDPIPE_CACHE=DIR] [UDPIPE_VENV=DIR]
#          [UDPIPE_TRAINING=default] [UDPIPE_TRAIN=never] scripts/raw-text-eval.sh [TREEBANK=SPOOLPARSE_MODEL...]
# UDPIPE_TRAIN=never measures UDPipe only where its model is cached (en_ewt with its defaults
# trains for hours).
# UDPIPE_TRAINING=default trains UDPipe with all its defaults (udpipe-raw.py; give it its own
# UDPIPE_CACHE: a cached model trained otherwise is retrained); the tables name the options.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared"
ud="$shared/data/ud"
[ -d "$ud" ] || { echo "skipped: $ud is absent" >&2; exit 0; }
evaluator="$shared/tools/conll18_ud_eval.py"
treebanks=${TREEBANKS:-hu_szeged el_gdt en_ewt en_atis}
out=${OUT:-$root/target/raw-text-eval}
cache=${UDPIPE_CACHE:-$HOME/.cache/udpipe-peer/raw}
venv=${UDPIPE_VENV:-$root/target/python-venv}
for arg in "$@"; do
  [[ $arg == *=* ]] || { echo "usage: scripts/raw-text-eval.sh [TREEBANK=SPOOLPARSE_MODEL...]" >&2; exit 2; }
done
mkdir -p "$out" "$cache"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import ufal.udpipe" 2>/dev/null ||
  "$venv/bin/python" -m pip install -q --disable-pip-version-check ufal.udpipe
py="$venv/bin/python"
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
sp="$root/target/release/spoolparse"

# timed FILE CMD...: runs CMD, writes its wall seconds to FILE.
timed() {
  local file=$1 s e
  shift
  s=$(date +%s.%N)
  "$@"
  e=$(date +%s.%N)
  awk "BEGIN { printf \"%.3f\", $e - $s }" >"$file"
}
# ours GOLD SYSTEM: LAS F1 by `spoolparse eval`.
ours() {
  "$sp" eval "$1" "$2" --json | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["aligned"]["las"]["f1"])'
}
# scores TB SYSTEM RAW_OUTPUT GOLD_TOKENS_OUTPUT SECONDS_FILE: one row (tab-separated) of each
# table, by the official evaluator loaded as a module.
scores() {
  python3 - "$evaluator" "$out/$1.gold.conllu" "$out/$1.train.conllu" "$@" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("ev", sys.argv[1]); ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)
gold_path, train_path, tb, name, raw, goldtok, seconds = sys.argv[2:]
gold = ev.load_conllu_file(gold_path)
METRICS = ["UPOS", "UFeats", "AllTags", "Lemmas", "LAS", "MLAS", "BLEX"]
def f1(system, metrics):
    e = ev.evaluate(gold, ev.load_conllu_file(system))
    return ["%.2f" % (100 * e[m].f1) for m in metrics]
seen = set()
for line in open(train_path, encoding="utf-8"):
    cols = line.split("\t")
    if len(cols) == 10 and cols[0].isdigit():
        seen.add(cols[1].lower())
def words(path):
    out = []
    for line in open(path, encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            out.append(cols)
    return out
pairs = [(g, s) for g, s in zip(words(gold_path), words(goldtok)) if g[1].lower() not in seen and g[2] != "_"]
unseen = "%.2f" % (100 * sum(g[2] == s[2] for g, s in pairs) / max(1, len(pairs)))
def sentences(path):
    """Per sentence: its `# confidence` (None without) and its words' (head, universal label)."""
    out, words, confidence = [], [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            if words:
                out.append((confidence, words))
            words, confidence = [], None
        elif line.startswith("# confidence = "):
            confidence = float(line.split("=")[1])
        elif not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                words.append((cols[6], cols[7].split(":")[0]))
    if words:
        out.append((confidence, words))
    return out
def kept_at_95(path):
    """The largest share of words that sentences taken by falling confidence keep with their
    LAS (head and universal label) at 95% or more; "–" for output without confidence."""
    ranked = [(c, len(g), sum(a == b for a, b in zip(g, s)))
              for (_, g), (c, s) in zip(sentences(gold_path), sentences(path))]
    if any(c is None for c, _, _ in ranked):
        return "–"
    ranked.sort(key=lambda r: -r[0])
    total, kept, right, best = sum(n for _, n, _ in ranked), 0, 0, 0
    for _, n, r in ranked:
        kept, right = kept + n, right + r
        if right >= 0.95 * kept:
            best = kept
    return "%.1f%%" % (100 * best / max(1, total))
n = len(words(gold_path))
speed = "%.0f" % (n / float(open(seconds).read()))
print("raw\t" + "\t".join([tb, name] + f1(raw, ["Tokens", "Sentences", "Words"] + METRICS) + [speed]))
print("gold\t" + "\t".join([tb, name] + f1(goldtok, METRICS) + [unseen + " (%d)" % len(pairs), kept_at_95(goldtok)]))
PY
}
# The tables keep the rows of treebanks this run does not measure (TREEBANKS=... runs add up).
rows="$out/table.tsv"
touch "$rows"
for tb in $treebanks; do
  awk -F'\t' -v tb="$tb" '$2 != tb' "$rows" >"$rows.tmp" && mv "$rows.tmp" "$rows"
done
checks="$out/las-check.tsv"
: >"$checks"

for tb in $treebanks; do
  gold="$out/$tb.gold.conllu"
  zstd -qdcf "$ud/$tb/dev.conllu.zst" >"$gold"
  zstd -qdcf "$ud/$tb/train.conllu.zst" >"$out/$tb.train.conllu"
  python3 "$root/scripts/conllu-to-raw.py" "$gold" >"$out/$tb.txt"
  [ -s "$cache/$tb-train.conllu" ] || cp "$out/$tb.train.conllu" "$cache/$tb-train.conllu"
  searches="beam greedy"
  if [ "${UDPIPE_TRAIN:-yes}" = never ] && [ ! -s "$cache/$tb.udpipe" ]; then
    echo "$tb: UDPipe skipped: no model in $cache and UDPIPE_TRAIN=never" >&2
    searches=""
  else
    nice -n 10 "$py" "$root/scripts/udpipe-raw.py" train "$cache/$tb-train.conllu" "$cache/$tb.udpipe"
  fi
  for search in $searches; do
    base="$out/$tb.udpipe-$search"
    timed "$base.seconds" "$py" "$root/scripts/udpipe-raw.py" run "$cache/$tb.udpipe" "$out/$tb.txt" "$base.raw.conllu" \
      "raw-$search" >/dev/null
    "$py" "$root/scripts/udpipe-raw.py" run "$cache/$tb.udpipe" "$gold" "$base.gold.conllu" "gold-$search" >/dev/null
    scores "$tb" "udpipe1 $search ($(cat "$cache/$tb.udpipe.options"))" "$base.raw.conllu" "$base.gold.conllu" \
      "$base.seconds" >>"$rows"
  done
  for arg in "$@"; do
  [ "${arg%%=*}" = "$tb" ] || continue
  model=${arg#*=}
  name=$(basename "$model" .model)
  base="$out/$tb.spoolparse.$name"
  if ! "$sp" parse --help | grep -qE '^ +- raw'; then
    echo "$tb: spoolparse skipped: this build's parse has no --format raw" >&2
    continue
  fi
  if ! timed "$base.seconds" "$sp" parse --model "$model" --format raw --threads 1 "$out/$tb.txt" \
    --output "$base.raw.conllu" --overwrite 2>"$base.log"; then
    echo "$tb: spoolparse skipped: $model cannot parse raw text: $(head -1 "$base.log")" >&2
    continue
  fi
  if ! "$sp" parse --model "$model" --threads 1 --retag=always "$gold" --output "$base.gold.conllu" --overwrite \
    2>>"$base.log"; then
    echo "$tb: spoolparse could not tag the gold tokens ($(tail -1 "$base.log")): its gold-token scores are on gold tags" >&2
    "$sp" parse --model "$model" --threads 1 "$gold" --output "$base.gold.conllu" --overwrite 2>>"$base.log"
  fi
  scores "$tb" "spoolparse $name" "$base.raw.conllu" "$base.gold.conllu" "$base.seconds" >>"$rows"
  printf '%s\t%s\t%s\n' "$tb" "$(python3 "$evaluator" "$gold" "$base.raw.conllu" | awk '$1 == "LAS" { print $NF }')" \
    "$(ours "$gold" "$base.raw.conllu")" >>"$checks"
  done
done

table() {
  local kind=$1 title=$2 header=$3 n i
  n=$(awk -F'|' '{ print NF }' <<<"$header")
  printf '%s\n\n| %s |\n|' "$title" "$header"
  for ((i = 0; i < n; i++)); do printf -- '---|'; done
  echo
  awk -F'\t' -v kind="$kind" '$1 == kind' "$rows" | cut -f2- | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
  echo
}
table raw "From raw text:" "treebank | system | Tokens | Sentences | Words | UPOS | UFeats | AllTags | Lemmas | LAS | MLAS | BLEX | words/s"
table gold "From gold tokens (each system tags, lemmatizes and parses them):" \
  "treebank | system | UPOS | UFeats | AllTags | Lemmas | LAS | MLAS | BLEX | Lemmas of unseen forms (words) | words kept at 95% LAS"
awk -F'\t' '$2 != $3 { print "spoolparse eval and the official evaluator disagree on LAS: " $0; bad = 1 } END { exit bad }' \
  "$checks" >&2
