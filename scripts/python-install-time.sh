#!/usr/bin/env bash
# Time from nothing to a parsed sentence in Python: a fresh virtual environment, `pip install` of
# the wheel built here (from the file: no index), then `import spoolparse`, opening MODEL and
# parsing one sentence, each step timed. Builds the wheel with scripts/python-env.sh first (not
# timed). Measure on a quiet machine.
#   usage: scripts/python-install-time.sh MODEL
set -euo pipefail
model=$(realpath "$1")
source "$(dirname "$0")/python-env.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
t0=$(now)
python3 -m venv "$tmp/venv"
t1=$(now)
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check --no-index "$wheel"
t2=$(now)
"$tmp/venv/bin/python" - "$model" <<'PY'
import sys, time
t0 = time.perf_counter()
import spoolparse
t1 = time.perf_counter()
model = spoolparse.Model(sys.argv[1])
t2 = time.perf_counter()
[parse] = model.parse([["The", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "."]])
t3 = time.perf_counter()
print(f"import {1000 * (t1 - t0):.1f} ms, open (checksums verified) {1000 * (t2 - t1):.1f} ms, "
      f"parse one sentence {1000 * (t3 - t2):.2f} ms: {parse}")
PY
t3=$(now)
printf 'fresh venv %.2f s, pip install of the wheel (%s) %.2f s, python: import + open + parse %.2f s; total %.2f s\n' \
  "$(calc "$t1 - $t0")" "$(du -h "$wheel" | cut -f1)" "$(calc "$t2 - $t1")" "$(calc "$t3 - $t2")" "$(calc "$t3 - $t0")"
