#!/usr/bin/env bash
# Fails when `cargo build`, `cargo test` and maturin's build of python/ resolve different
# features for a crate they share: each such crate, and every crate above it, is then compiled
# once per build (CI compiled the whole graph three times, 17 minutes of its 30). The fix is to
# turn the feature on in the root Cargo.toml's "feature unification" dependencies.
#   usage: scripts/check-features.sh
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(rustc -vV | sed -n 's/^host: //p')
resolved() { # PACKAGE EDGES: each crate of the graph with its features, one line each
  cargo tree -q -p "$1" -e "$2" -f '{p} [{f}]' --prefix none --target "$target" | sed 's/ (\*)$//' | sort -u
}
build=$(resolved spoolparse normal,build)
status=0
for other in "spoolparse normal,build,dev" "spoolparse-python normal,build"; do
  # The crates of `cargo build` whose features differ in the other build.
  parted=$(comm -23 <(echo "$build") <(resolved $other) | cut -d' ' -f1,2)
  if [ -n "$parted" ]; then
    echo "features differ between \`cargo build\` and the build of ($other) for:" >&2
    while read -r name version; do
      echo "  $name $version: $(echo "$build" | grep -F "$name $version " | sed 's/.*\[/[/') in \`cargo build\`," \
        "$(resolved $other | grep -F "$name $version " | sed 's/.*\[/[/' | tr '\n' ' ')there" >&2
    done <<< "$parted"
    status=1
  fi
done
exit $status
