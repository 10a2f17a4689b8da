#!/bin/sh
# check_run.sh [--expect REGEX]... -- COMMAND [ARGS...]
#
# ctest wrapper for the microbenchmarks: runs COMMAND once and passes only if it exits 0, every
# REGEX (grep -E) matches a line of its output, and no benchmark reported "ERROR OCCURRED" (what
# Google Benchmark prints for SkipWithError, e.g. when heaprec is not actually loaded). Never looks
# at timings. Profiles heaprec writes at exit go to a temporary directory, removed afterwards.
set -u
expects_file=$(mktemp) || exit 2
out_dir=$(mktemp -d) || exit 2
output="$out_dir/output.txt"
trap 'rm -rf "$out_dir" "$expects_file"' EXIT
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --expect) printf '%s\n' "$2" >> "$expects_file"; shift 2 ;;
    *) echo "check_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 1 ] || { echo "usage: check_run.sh [--expect REGEX]... -- COMMAND [ARGS...]" >&2; exit 2; }
shift
HEAPREC_OUTPUT="$out_dir/heaprec.%e.%p.pb.gz" "$@" > "$output" 2>&1
status=$?
cat "$output"
fail=0
if [ $status -ne 0 ]; then echo "check_run.sh: FAIL: exit status $status" >&2; fail=1; fi
if grep -q "ERROR OCCURRED" "$output"; then
  echo "check_run.sh: FAIL: a benchmark refused to run (ERROR OCCURRED)" >&2; fail=1
fi
while IFS= read -r regex; do
  if ! grep -Eq -- "$regex" "$output"; then
    echo "check_run.sh: FAIL: no output line matches: $regex" >&2; fail=1
  fi
done < "$expects_file"
exit $fail
