#!/usr/bin/env bash
# The README's test command: the Rust tests (unit, property, integration), then the Python
# package and the Spark job (scripts/python-test.sh: a virtual environment under target/).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release
scripts/python-test.sh
