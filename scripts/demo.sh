#!/usr/bin/env bash
# The README's first command: installs, builds, and profiles the bundled demo program (a toy
# key-value store), printing where the profile is and the top allocation sites still held at exit;
# then the Ruby demo under the Ruby front end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build=${HEAPREC_BUILD_DIR:-$root/build}
mkdir -p "$root/out"
cd "$root/out"
"$build/bin/heaprec" run -- "$build/bin/kvstore" 400000
# The same for a Ruby program (the Ruby front end, ruby/): a session store that never trims its log.
echo >&2
"$build/bin/heaprec" run --ruby -- ruby "$root/demo/ruby_sessions.rb" 200000
