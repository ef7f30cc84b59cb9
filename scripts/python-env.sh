# Sourced by the Python scripts (python-test.sh, spark-bench.sh, python-install-time.sh): makes
# the virtual environment with the build and test tools (python/requirements-dev.txt: maturin,
# pytest, pyspark, and udtools: the UD validator), builds the `spoolparse` binary and the wheel,
# and installs the wheel in it.
# Sets root, target, venv (SPOOLPARSE_VENV, default TARGET/python-venv: made once, then reused),
# wheel and bin. Needs python3 (3.9+), Java 17+ for Spark, zstd, and Chromium with its driver for
# the workbench's browser test; all four are installed with apt-get where missing.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=${SPOOLPARSE_VENV:-$target/python-venv}
missing=()
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v zstd >/dev/null || missing+=(zstd)
command -v chromium >/dev/null || missing+=(chromium fonts-dejavu-core)  # a font: screenshots need one
command -v chromedriver >/dev/null || missing+=(chromium-driver)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/python/requirements-dev.txt"
cargo build --release --manifest-path "$root/Cargo.toml"
bin=$target/release/spoolparse
rm -rf "$target/wheels"
"$venv/bin/maturin" build --release --quiet -m "$root/python/Cargo.toml" -i "$venv/bin/python" -o "$target/wheels"
wheel=$(ls "$target"/wheels/spoolparse-*.whl)
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
