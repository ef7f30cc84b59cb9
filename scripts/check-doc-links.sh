#!/usr/bin/env bash
# Checks the links of README.md and docs/*.md: every relative link [text](PATH#ANCHOR) must name
# an existing file or folder (relative to the page), and its #ANCHOR a heading of that page
# (GitHub's slugs); every repository path in backquotes (`scripts/...`, `src/...`, ...) must
# exist, from the repository root. Links to the web and paths under ../shared (absent without the
# shared data) are not checked. Prints each broken one as FILE:LINE: problem.
#   usage: scripts/check-doc-links.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
status=0
slugs() { # the anchors of a Markdown file's headings, one a line
  grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ +//' | tr '[:upper:]' '[:lower:]' |
    sed -E 's/[^[:alnum:] _-]//g; s/ /-/g'
}
for page in README.md docs/*.md; do
  dir=$(dirname "$page")
  # Relative links, outside code blocks.
  while IFS=: read -r line target; do
    path=${target%%#*}
    anchor=${target#"$path"}; anchor=${anchor#\#}
    case $path in http://*|https://*|mailto:*) continue ;; esac
    [ -n "$path" ] && file="$dir/$path" || file=$page
    case $(realpath -m "$file") in "$(realpath -m "$root/../shared")"/*) continue ;; esac
    if [ ! -e "$file" ]; then
      echo "$page:$line: $target: no such file"; status=1
    elif [ -n "$anchor" ] && [ -f "$file" ] && ! slugs "$file" | grep -qxF "$anchor"; then
      echo "$page:$line: $target: no such heading"; status=1
    fi
  done < <(awk '/^ *```/ { code = !code; next }
    !code { s = $0; while (match(s, /\]\([^) ]+\)/)) { print NR ":" substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH) } }' "$page")
  # Repository paths in backquotes, from the root.
  while IFS=: read -r line path; do
    path=${path%%[:*]*}
    [ -e "$path" ] || { echo "$page:$line: \`$path\`: no such file"; status=1; }
  done < <(grep -noE '`(scripts|config|systemd|src|tests|python|examples|benches|fuzz|docs|\.ci)/[^` ]*`' "$page" |
    sed -E 's/`//g')
done
exit $status
