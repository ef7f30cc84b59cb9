#!/usr/bin/env bash
# Fuzzes the model file with cargo-fuzz (libFuzzer): the header parser, then opening a whole
# model and parsing with it, each for SECONDS (default 300). The second target starts from a
# real model trained on the test fixtures, so that mutations get past the header checks.
#   usage: scripts/fuzz.sh [SECONDS]
# Needs `cargo install cargo-fuzz`; the nightly features it uses come through RUSTC_BOOTSTRAP=1,
# so a stable toolchain does. Crashes are written to fuzz/artifacts/ and fail the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
cargo build --release --manifest-path "$root/Cargo.toml"
seeds="$root/fuzz/corpus/model_open"
mkdir -p "$seeds" "$root/fuzz/corpus/model_header"
# A seed of an older format would stop every mutation at the version check: rebuild it.
if ! "$root/target/release/spoolparse" inspect "$seeds/fixture.model" >/dev/null 2>&1; then
  "$root/target/release/spoolparse" train --train "$root/tests/fixtures/special.conllu" --epochs 2 \
    --output "$seeds/fixture.model" --quantize i8 >/dev/null 2>&1
  cp "$seeds/fixture.model" "$root/fuzz/corpus/model_header/fixture.model"
fi
cd "$root/fuzz"
for target in model_header model_open; do
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=4096 2>&1 \
    | grep -E "^(#[0-9]+ +DONE|Done|==[0-9]+== ERROR|SUMMARY)|panicked" || true
  if compgen -G "$root/fuzz/artifacts/$target/crash-*" >/dev/null; then
    echo "$target: crashes in fuzz/artifacts/$target" >&2
    exit 1
  fi
done
