#!/usr/bin/env bash
# Builds the core, profile, symbolizer, analysis, render and push unit tests with
# AddressSanitizer+UndefinedBehaviorSanitizer, and the core's with ThreadSanitizer, and runs them.
# Only the core runs on many threads (the recorder is called from every thread of the profiled
# program); the CLI side runs on one, where ThreadSanitizer would only repeat the first build's run.
# The CLI's own unit tests are not here: their nine tests (environment strings, closest-match
# suggestions) would cost an AddressSanitizer build of every command, a third of this script's
# compile time (227 of 629 CPU seconds at -O1 in a clean run, from ninja's log); what the commands do
# with untrusted input is in profile/, symbolize/ and push/, which are.
# The preload library itself is not built here: it runs inside other programs, which cannot host a
# sanitizer runtime they were not built with.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${HEAPREC_BUILD_DIR:-$root/build}
declare -A tests=(
  [asan]="core/heaprec_core_tests profile/heaprec_profile_tests analysis/heaprec_analysis_tests
          render/heaprec_render_tests symbolize/heaprec_symbolize_tests push/heaprec_push_tests"
  [tsan]="core/heaprec_core_tests"
)
# RTTI is off in the core (it is linked into the preload library), so UBSan's vptr check, which needs
# type information, is left out.
declare -A flags=(
  [asan]="-O0 -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer"
  [tsan]="-O1 -fsanitize=thread"
)
# The optional parts these targets do not use stay off, so neither build runs npm for the flame page.
optional_off=(-DHEAPREC_BUILD_BENCHMARKS=OFF -DHEAPREC_BUILD_RUBY=OFF -DHEAPREC_FLAME_PAGE=OFF)
for kind in asan tsan; do
  build="$base-$kind"
  # Debug (-g): AddressSanitizer at -O0 finds everything it finds at -O1 and builds in less than
  # half the time (17.6 s user for leaks_command.cc at -O1, 7.5 s at -O0, measured with
  # /usr/bin/time on the compile command); these unit tests run in seconds either way.
  # ThreadSanitizer stays at -O1, which its documentation asks for, on the core alone.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug "${optional_off[@]}" \
    -DCMAKE_CXX_FLAGS="${flags[$kind]}" -DCMAKE_C_FLAGS="${flags[$kind]}" \
    -DCMAKE_EXE_LINKER_FLAGS="${flags[$kind]}" >/dev/null
  targets=()
  for test in ${tests[$kind]}; do targets+=("$(basename "$test")"); done
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >/dev/null
  for test in ${tests[$kind]}; do
    echo "== $kind: $test"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 TSAN_OPTIONS=halt_on_error=1 \
      "$build/tests/$test" --gtest_brief=1
  done
done
