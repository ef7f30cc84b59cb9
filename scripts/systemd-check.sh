#!/usr/bin/env bash
# Checks systemd/: `systemd-analyze verify` must accept each unit, and its `systemd-analyze
# security` exposure must be at most its bound (1.0 for the daemon, 2.0 for the workbench; printed,
# with the checks that fail).
# ExecStart is pointed at the binary built here (verify insists that it exists). The sysusers.d
# and tmpfiles.d files are applied to a scratch root, and the directories they make must have
# the modes the group relies on. Installs systemd's tools where they are missing.
#   usage: scripts/systemd-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze not found: installing systemd" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null
fi
cargo build --release --manifest-path "$root/Cargo.toml" 2>/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Each unit with the exposure it may have: the workbench listens on loopback (its network
# address families and IPAddressAllow count against it).
for unit in spoolparse.service:1.0 spoolparse-annotate.service:2.0; do
  name=${unit%%:*} max_exposure=${unit#*:}
  sed "s|/usr/local/bin/spoolparse|$root/target/release/spoolparse|" "$root/systemd/$name" > "$tmp/$name"
  systemd-analyze verify "$tmp/$name"
  echo "systemd-analyze verify $name: accepted"
  security=$(systemd-analyze security --offline=yes "$tmp/$name")
  grep -E "✗|Overall exposure" <<<"$security"
  exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$security")
  if [[ -z $exposure ]] || ! awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }'; then
    echo "$name: exposure ${exposure:-unknown} is above $max_exposure" >&2
    exit 1
  fi
done

# The user, the group and the directories, as the install steps make them (needs root: chown).
if [[ $(id -u) -ne 0 ]]; then
  echo "not root: sysusers.d and tmpfiles.d not checked"
  exit 0
fi
scratch="$tmp/root"
install -D -m 644 "$root/systemd/spoolparse.conf" "$scratch/etc/sysusers.d/spoolparse.conf"
install -D -m 644 "$root/systemd/spoolparse-tmpfiles.conf" "$scratch/etc/tmpfiles.d/spoolparse.conf"
systemd-sysusers --root="$scratch" >/dev/null
systemd-tmpfiles --create --root="$scratch"
uid=$(awk -F: '$1 == "spoolparse" { print $3 }' "$scratch/etc/passwd")
gid=$(awk -F: '$1 == "spoolparse" { print $3 }' "$scratch/etc/group")
[[ -n $uid && -n $gid ]] || { echo "sysusers.d: no user or group spoolparse" >&2; exit 1; }
for want in 750:. 750:spool 2770:spool/incoming 2770:annotated 750:out 750:metrics; do
  dir="$scratch/var/lib/spoolparse/${want#*:}"
  got=$(stat -c '%a:%u:%g' "$dir")
  [[ $got == "${want%%:*}:$uid:$gid" ]] || { echo "tmpfiles.d: ${want#*:} is $got, want ${want%%:*}:$uid:$gid" >&2; exit 1; }
done
echo "sysusers.d and tmpfiles.d: user and group spoolparse, incoming/ and annotated/ 2770, the rest 0750"
