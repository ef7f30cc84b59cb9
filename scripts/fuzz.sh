#!/usr/bin/env bash
# Fuzzes with cargo-fuzz (libFuzzer), each target for SECONDS (default 300), one after the other:
#   model_header    the model file's header parser
#   model_open      opening a whole model and parsing with it (seeded with a real model trained
#                   on the test fixtures, so that mutations get past the header checks)
#   corpus_readers  the CoNLL-U, CoNLL-X and text readers, plain, through small buffers and zstd
#                   (seeded with the fixtures and the first sentences of the shared treebanks)
#   config          the daemon's configuration parser (seeded with config/spoolparse.toml)
#   usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (all four targets by default)
# Needs `cargo install cargo-fuzz`; the nightly features it uses come through RUSTC_BOOTSTRAP=1,
# so a stable toolchain does. Run it under `nice` on a shared machine. Findings (crash-,
# timeout-, oom-, leak- files) are written to fuzz/artifacts/TARGET/ and fail the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_header model_open corpus_readers config)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz

# Writes seed inputs for TARGET into fuzz/corpus/TARGET (not committed: generated each run).
seed() {
  local dir="$root/fuzz/corpus/$1" fixtures="$root/tests/fixtures" ud="$root/../shared/data/ud"
  mkdir -p "$dir"
  case $1 in
    model_header | model_open)
      mkdir -p "$root/fuzz/corpus/model_open"
      local model="$root/fuzz/corpus/model_open/fixture.model"
      # A seed of an older format would stop every mutation at the version check: rebuild it.
      cargo build --release --manifest-path "$root/Cargo.toml"
      if ! "$root/target/release/spoolparse" inspect "$model" >/dev/null 2>&1; then
        "$root/target/release/spoolparse" train --train "$fixtures/special.conllu" --epochs 2 \
          --output "$model" --overwrite --quantize i8 >/dev/null 2>&1
      fi
      [ "$1" = model_open ] || cp "$model" "$dir/fixture.model"
      ;;
    corpus_readers)
      # The first byte chooses format and transport (see fuzz_targets/corpus_readers.rs).
      local m
      for m in 00 04 28 10; do
        { printf "\x$m"; cat "$fixtures/special.conllu"; } >"$dir/special-$m"
      done
      for m in 01 09; do
        { printf "\x$m"; cat "$fixtures/small.conllx"; } >"$dir/small-$m"
      done
      { printf '\x02'; sed -n 's/^# text = //p' "$fixtures/special.conllu"; } >"$dir/text-02"
      { printf '\x18'; zstd -q -c "$fixtures/special.conllu"; } >"$dir/special-zst-18"
      local tb
      for tb in en_ewt el_gdt hu_szeged; do
        [ -f "$ud/$tb/dev.conllu.zst" ] || continue
        # Three sentences each: multiword tokens, comments and long lines, yet small inputs.
        { printf '\x00'; zstdcat "$ud/$tb/dev.conllu.zst" | awk -v RS= -v ORS='\n\n' 'NR <= 3'; } >"$dir/$tb-00"
        { printf '\x02'; zstdcat "$ud/$tb/dev.conllu.zst" | sed -n 's/^# text = //p' | awk 'NR <= 5'; } >"$dir/$tb-02"
      done
      ;;
    config)
      cp "$root/config/spoolparse.toml" "$dir/example.toml"
      printf '[paths]\nspool = "s"\noutput = "o"\nmodel = "m"\n' >"$dir/minimal.toml"
      ;;
  esac
}

# Per-target libFuzzer options beyond the time limit: memory and time per input bounded.
options() {
  case $1 in
    corpus_readers) echo "-dict=$root/fuzz/dicts/conllu.dict -max_len=16384 -timeout=10 -rss_limit_mb=2048" ;;
    config) echo "-max_len=4096 -timeout=10 -rss_limit_mb=2048" ;;
    *) echo "-rss_limit_mb=4096" ;;
  esac
}

cd "$root/fuzz"
for target in "${targets[@]}"; do
  seed "$target"
  status=0
  # shellcheck disable=SC2046 # the options are separate words
  RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" -- -max_total_time="$seconds" $(options "$target") \
    >"$root/fuzz/$target.log" 2>&1 || status=$?
  grep -E "^(#[0-9]+ +DONE|Done|==[0-9]+== ERROR|SUMMARY)|panicked" "$root/fuzz/$target.log" || true
  if [ "$status" -ne 0 ] || compgen -G "$root/fuzz/artifacts/$target/[ctol]*-*" >/dev/null; then
    echo "$target: findings in fuzz/artifacts/$target (log: fuzz/$target.log)" >&2
    exit 1
  fi
done
