#!/usr/bin/env bash
# The README's second command: installs, builds, and runs the whole test suite with ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build=${HEAPREC_BUILD_DIR:-$root/build}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
# The core and CLI-side tests again under AddressSanitizer+UBSan and ThreadSanitizer.
"$root/scripts/test-sanitizers.sh"
