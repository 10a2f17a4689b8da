#!/usr/bin/env bash
# Configures and builds heaprec into build/ (or $HEAPREC_BUILD_DIR). Extra arguments go to cmake.
#
#   scripts/build.sh [CMAKE_ARGS...]         everything: heaprec, the test suite and the benchmarks
#                                            (scripts/test.sh, bench/run.sh)
#   scripts/build.sh --demo [CMAKE_ARGS...]  only what scripts/demo.sh runs: the heaprec command,
#                                            libheaprec.so (with the flame-graph page), the demo
#                                            programs and the Ruby front end's extension
#
# Both share the build directory. --demo configures a new one with the tests and benchmarks off
# (and so needs only `scripts/install-deps.sh --demo`'s packages); in one already configured it
# leaves the options as they are and builds its targets alone, so after scripts/test.sh it
# rebuilds nothing. Without --demo the tests and benchmarks are switched on, so scripts/test.sh
# after scripts/demo.sh builds all of them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HEAPREC_BUILD_DIR:-$root/build}

if [[ ${1:-} == --demo ]]; then
  shift
  options=()
  [[ -f $build/CMakeCache.txt ]] ||
    options=(-DHEAPREC_BUILD_TESTS=OFF -DHEAPREC_BUILD_BENCHMARKS=OFF)
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${options[@]}" "$@" \
    >/dev/null
  # heaprec depends on heaprec_preload (libheaprec.so); the Ruby extension is there only with
  # HEAPREC_BUILD_RUBY (the default).
  targets=(heaprec heaprec_preload demo_service kvstore)
  if grep -q '^HEAPREC_BUILD_RUBY:BOOL=ON$' "$build/CMakeCache.txt"; then
    targets+=(heaprec_ruby_ext)
  fi
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
  exit 0
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEAPREC_BUILD_TESTS=ON -DHEAPREC_BUILD_BENCHMARKS=ON "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
