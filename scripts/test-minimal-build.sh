#!/usr/bin/env bash
# The minimal build (README.md, "Minimal build"): configures heaprec in a fresh temporary directory
# with the tests, benchmarks, Ruby front end, flame page and browser tests off, builds it, and checks
#  - that configuring looked for none of what only those parts need (GoogleTest, Google Benchmark,
#    Ruby, Node.js, npm, Chromium, Go, rustc, the other allocators, the debuginfod server, lintian):
#    none of them is in CMakeCache.txt (libdebuginfod, the client library, is not optional: heaprec
#    links it);
#  - that its heaprec profiles a program (the demo, exactly) and reports the profile, symbolized,
#    with the version in VERSION;
#  - that its `heaprec flame` fails with one line saying how to build heaprec with the page;
#  - that it installs, and the installed heaprec finds its library.
# scripts/test.sh runs it; it prints one line with the time it took. Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/heaprec-minimal.XXXXXX")
trap 'rm -rf "$work"' EXIT
build=$work/build
log=$work/log

fail() {
  echo "test-minimal-build: $*" >&2
  exit 1
}
# Runs a step with its output in $log, shown only when the step fails.
quietly() {
  "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "failed: $*"; }
}

quietly cmake -S "$root" -B "$build" -G Ninja -DHEAPREC_BUILD_TESTS=OFF \
  -DHEAPREC_BUILD_BENCHMARKS=OFF -DHEAPREC_BUILD_RUBY=OFF -DHEAPREC_FLAME_PAGE=OFF \
  -DHEAPREC_BROWSER_TESTS=OFF "$@"

# Every find_package/find_program/find_path leaves its result (or NOTFOUND) in the cache. Comments
# and the options themselves (which name the parts, not what they need) are left out of the search.
found=$(grep -vE '^(//|#)|^HEAPREC_(BUILD_TESTS|BUILD_BENCHMARKS|BUILD_RUBY|FLAME_PAGE|BROWSER_TESTS)[:-]' \
  "$build/CMakeCache.txt" |
  grep -inE 'gtest|gmock|benchmark|ruby|rustc|node|npm|chromium|jemalloc|tcmalloc|golang|pprof|lintian|(^|[^a-z])go([^a-z]|$)|debuginfod_server' ||
  true)
[[ -z $found ]] || fail "the minimal configuration looked for optional dependencies:"$'\n'"$found"

quietly cmake --build "$build" -j "$(nproc)"
if grep -q 'warning:' "$log"; then
  grep -A3 'warning:' "$log" >&2
  fail "the minimal build has compiler warnings"
fi
heaprec=$build/bin/heaprec
for file in "$heaprec" "$build/lib/libheaprec.so" "$build/bin/kvstore"; do
  [[ -x $file ]] || fail "the minimal build did not make $file"
done

# The version, from the VERSION file, in the command and in the profiles the library writes.
version=$(<"$root/VERSION")
[[ $("$heaprec" --version) == "heaprec $version" ]] ||
  fail "heaprec --version says '$("$heaprec" --version)', VERSION says $version"

# The demo under heaprec, every allocation recorded, with few requests.
cd "$work"
status=0
"$heaprec" run --sample-interval 1 -o "$work/kvstore.%p.pb.gz" -- "$build/bin/kvstore" 2000 \
  >"$work/run.out" 2>"$work/run.err" || status=$?
((status == 0)) || { cat "$work/run.err" >&2; fail "heaprec run exited with status $status"; }
grep -q '^kvstore: 2000 requests, ' "$work/run.out" ||
  fail "the demo's own output did not reach stdout: $(cat "$work/run.out")"
profiles=()
for file in "$work"/kvstore.*.pb.gz; do
  [[ $file == *.peak.pb.gz || ! -e $file ]] || profiles+=("$file")
done
((${#profiles[@]} == 1)) || fail "expected one final profile, found ${#profiles[@]}: $(ls "$work")"
profile=${profiles[0]}

"$heaprec" report "$profile" >"$work/report.out" 2>&1 ||
  { cat "$work/report.out" >&2; fail "heaprec report failed"; }
grep -q "^Comments: heaprec $version " "$work/report.out" ||
  { cat "$work/report.out" >&2; fail "the profile does not say heaprec $version wrote it"; }
# The leak the demo is about, named and placed by the symbolizer.
grep -qE 'Store::RememberKey kvstore\.cc:[0-9]+$' "$work/report.out" ||
  { cat "$work/report.out" >&2; fail "heaprec report does not show Store::RememberKey kvstore.cc"; }

status=0
"$heaprec" flame "$profile" -o "$work/flame.html" >"$work/flame.out" 2>"$work/flame.err" ||
  status=$?
((status == 1)) || fail "heaprec flame exited with status $status, not 1"
[[ ! -s $work/flame.out && ! -e $work/flame.html ]] || fail "heaprec flame wrote a page"
lines=$(wc -l <"$work/flame.err")
if ((lines != 1)) || ! grep -q -- '-DHEAPREC_FLAME_PAGE=ON' "$work/flame.err"; then
  fail "heaprec flame should say in one line how to build the page, not: $(cat "$work/flame.err")"
fi

# The README's install command, into a scratch prefix: the installed heaprec finds the installed
# libheaprec.so in its private directory and profiles a program with it.
quietly cmake --install "$build" --prefix "$work/prefix"
for file in bin/heaprec lib/heaprec/libheaprec.so include/heaprec/heaprec.h include/heaprec/runtime.h lib/pkgconfig/heaprec.pc \
  share/doc/heaprec/LICENSE share/bash-completion/completions/heaprec \
  share/man/man1/heaprec-run.1.gz; do
  [[ -e $work/prefix/$file ]] || fail "cmake --install did not install $file"
done
quietly "$work/prefix/bin/heaprec" run -o "$work/installed.%p.pb.gz" -- /bin/true
compgen -G "$work/installed.*.pb.gz" >/dev/null ||
  fail "the installed heaprec wrote no profile: $(cat "$log")"

echo "test-minimal-build: ok: configured, built and checked in $(($(date +%s) - start)) s"
