#!/usr/bin/env bash
# Checks systemd/spoolparse.service: `systemd-analyze verify` must accept it, and
# `systemd-analyze security` prints its exposure. ExecStart is pointed at the binary built here
# (verify insists that it exists). Installs systemd's tools where they are missing.
#   usage: scripts/systemd-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze not found: installing systemd" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null
fi
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed "s|/usr/local/bin/spoolparse|$root/target/release/spoolparse|" "$root/systemd/spoolparse.service" > "$tmp/spoolparse.service"
systemd-analyze verify "$tmp/spoolparse.service"
echo "systemd-analyze verify: accepted"
systemd-analyze security --offline=yes "$tmp/spoolparse.service" | grep -E "✗|Overall exposure"
