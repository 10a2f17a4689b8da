#!/usr/bin/env bash
# Makes heaprec's man pages from its own help pages: heaprec(1) from `heaprec help`, and
# heaprec-COMMAND(1) from `heaprec help COMMAND` for each command `heaprec help` lists, each turned
# into roff by help-to-man.awk and gzipped into OUT_DIR as man1 wants them. Nothing here names a
# command or an option, so the pages follow the CLI as it changes.
# Usage: make-man-pages.sh HEAPREC OUT_DIR
set -euo pipefail
heaprec=$1 out=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/heaprec-man.XXXXXX")
trap 'rm -rf "$work"' EXIT

# "NAME SUMMARY" for each row of the "Commands:" section, continuation lines joined.
commands=$("$heaprec" help | awk '
  /^Commands:$/ { on = 1; next }
  on && /^$/ { exit }
  on && /^  [^ ]/ { if (row != "") print row; sub(/^  /, ""); row = $0; next }
  on { sub(/^ +/, " "); row = row $0 }
  END { if (row != "") print row }' | sed -E 's/ +/ /g')
[[ -n $commands ]] || { echo "make-man-pages.sh: $heaprec help lists no commands" >&2; exit 1; }

see_also="heaprec"
while read -r name _; do see_also+=" heaprec-$name"; done <<<"$commands"
version=$("$heaprec" --version | awk '{ print $2 }')

# page NAME SUMMARY HELP-ARGS...: OUT_DIR/NAME.1.gz from `heaprec HELP-ARGS...`.
page() {
  local name=$1 summary=$2
  shift 2
  "$heaprec" "$@" >"$work/help.txt"
  awk -v name="$name" -v summary="$summary" -v version="$version" \
    -v see_also="$see_also" -f "$(dirname "$0")/help-to-man.awk" "$work/help.txt" |
    gzip -9n >"$out/$name.1.gz"
}

mkdir -p "$out"
rm -f "$out"/*.1.gz
# The description under the usage line: "heaprec: a sampling live-heap profiler for ...".
summary=$("$heaprec" help | sed -n 3p | sed -E 's/^heaprec: (an? )?//; s/\.$//')
page heaprec "$summary" help
while read -r name summary; do
  # The summary is a sentence ("Run a program under ..."); a NAME line is a lower-case phrase.
  summary=${summary%.}
  page "heaprec-$name" "${summary,}" help "$name"
done <<<"$commands"
