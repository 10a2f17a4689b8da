#!/usr/bin/env bash
# The README's second command: installs, checks the C and C++ files' formatting, builds, and runs
# the whole test suite: the core and CLI-side unit tests under AddressSanitizer+UBSan and the core's
# under ThreadSanitizer, a short fuzz run, the minimal build (everything optional off), and then every
# ctest test (unit, end-to-end, reliability, report and benchmark smoke tests) on the normal build,
# whose summary is the last thing printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Each step's time goes to stderr, so a CI run over its budget says where the time went.
step() {
  local started=$SECONDS
  "$@"
  echo "test.sh: $(basename "$1") took $((SECONDS - started)) s" >&2
}
step "$root/scripts/install-deps.sh"
step "$root/scripts/check-format.sh"
step "$root/scripts/build.sh"
build=${HEAPREC_BUILD_DIR:-$root/build}
step "$root/scripts/test-sanitizers.sh"
# A short fuzz run of the pprof reader, the settings parser and the HTTP request parser, 13 s each:
# the 40 s that two fuzzers at 20 s took (fuzz/README.md has a longer campaign).
step "$root/fuzz/run.sh" 13
step "$root/scripts/test-minimal-build.sh"
echo "test.sh: ctest starts after $SECONDS s" >&2
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
