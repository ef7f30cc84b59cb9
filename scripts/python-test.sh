#!/usr/bin/env bash
# Builds the Python package (python/: a maturin wheel of the PyO3 crate and spoolparse/) and runs
# its tests (python/tests: the package, and the Spark job on a local Spark and on a standalone
# cluster on 127.0.0.1, each compared byte for byte with the `spoolparse` binary built here) in
# the virtual environment of scripts/python-env.sh. The tests train a small model: on en_ewt
# with ../shared, else on tests/fixtures (they say so).
#   usage: scripts/python-test.sh [PYTEST_ARGS...]
set -euo pipefail
source "$(dirname "$0")/python-env.sh"
cd "$root"
SPOOLPARSE_BIN="$bin" "$venv/bin/python" -m pytest python/tests -ra "$@"
