#!/usr/bin/env bash
# The README's first command: installs, builds, and profiles the bundled demo program (a toy
# key-value store), printing where the profile is and the top allocation sites still held at exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build=${HEAPREC_BUILD_DIR:-$root/build}
mkdir -p "$root/out"
cd "$root/out"
"$build/bin/heaprec" run -- "$build/bin/kvstore" 400000
