#!/usr/bin/env bash
# Checks that the tracked C and C++ files are formatted as .clang-format says (Google style, 100
# columns), with Debian 12's clang-format (14; scripts/install-deps.sh installs it). Prints each file
# that is not, and how to fix it, and exits 1; exits 0 when all are formatted.
#
#   scripts/check-format.sh [PATHSPEC...]    every tracked *.c, *.cc, *.h, *.cpp by default; with
#                                            pathspecs (git's: directories, files, globs) only those
#
# scripts/test.sh runs it before building.
set -euo pipefail
# Pathspecs are relative to where the script is run from, like git's; without any, it checks the
# whole checkout wherever it is run from.
(($#)) || cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
command -v "$clang_format" >/dev/null ||
  { echo "check-format: $clang_format not found: apt-get install clang-format" >&2; exit 2; }

# The C/C++ files git tracks under the pathspecs (all of them without any).
files=()
while IFS= read -r -d '' file; do
  case $file in
    *.c | *.cc | *.h | *.cpp) files+=("$file") ;;
  esac
done < <(git ls-files -z -- "$@")
if ((${#files[@]} == 0)); then
  echo "check-format: no tracked C/C++ files under: ${*:-the repository}" >&2
  exit 2
fi

# One clang-format per batch of files, batches in parallel; each violation is a line
# "FILE:LINE:COLUMN: error: code should be clang-formatted [-Wclang-format-violations]".
status=0
report=$(printf '%s\0' "${files[@]}" |
  xargs -0 -n 32 -P "$(nproc)" "$clang_format" --dry-run -Werror 2>&1) || status=$?
violation='^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*'
mapfile -t unformatted < <(sed -n "s/$violation/\\1/p" <<<"$report" | sort -u)
if ((status != 0 && ${#unformatted[@]} == 0)); then
  printf '%s\n' "$report" >&2
  echo "check-format: $clang_format failed" >&2
  exit 2
fi
if ((${#unformatted[@]})); then
  printf 'check-format: not formatted: %s\n' "${unformatted[@]}" >&2
  echo "check-format: ${#unformatted[@]} of ${#files[@]} files; fix with: $clang_format -i FILE..." \
    "($("$clang_format" --version))" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
