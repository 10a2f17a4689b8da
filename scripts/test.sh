#!/usr/bin/env bash
# The README's second command: installs, checks the C and C++ files' formatting, builds, and runs
# the whole test suite: the core and CLI-side unit tests under AddressSanitizer+UBSan and the core's
# under ThreadSanitizer, a short fuzz run, the minimal build (everything optional off), and then every
# ctest test (unit, end-to-end, reliability, report and benchmark smoke tests) on the normal build,
# whose summary is the last thing printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/check-format.sh"
"$root/scripts/build.sh"
build=${HEAPREC_BUILD_DIR:-$root/build}
"$root/scripts/test-sanitizers.sh"
# A short fuzz run of the pprof reader, the settings parser and the HTTP request parser, 13 s each:
# the 40 s that two fuzzers at 20 s took (fuzz/README.md has a longer campaign).
"$root/fuzz/run.sh" 13
"$root/scripts/test-minimal-build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
