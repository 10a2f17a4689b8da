#!/usr/bin/env bash
# The README's first command. Installs what the demo needs (scripts/install-deps.sh --demo), builds
# only what it runs (scripts/build.sh --demo: the heaprec command, libheaprec.so, the demo programs
# and the Ruby front end; not the test suite), then profiles demo/service.cc, a small service with
# a cache that plateaus, a shared_ptr cycle that leaks, a log that only grows and per-request
# temporaries, printing where the profiles are and the sites still holding memory at exit; then
# the Ruby demo under the Ruby front end; and ends with the next commands to try.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" --demo
"$root/scripts/build.sh" --demo
build=${HEAPREC_BUILD_DIR:-$root/build}
# Paths in the next commands are relative to the checkout (the build directory may be elsewhere).
relative() {
  if [[ $1 == "$root"/* ]]; then printf '%s' "${1#"$root"/}"; else printf '%s' "$1"; fi
}
heaprec=$(relative "$build/bin/heaprec")
service=$(relative "$build/bin/service")

mkdir -p "$root/out"
cd "$root/out"
"$build/bin/heaprec" run -- "$build/bin/service"
# The final profile this run wrote: the newest heaprec.service.PID.pb.gz (a failed run stopped the
# script above).
final=out/heaprec.service.PID.pb.gz
for file in $(ls -t heaprec.service.*.pb.gz); do
  if [[ $file != *.peak.pb.gz ]]; then
    final=out/$file
    break
  fi
done

# The same for a Ruby program (the Ruby front end, ruby/): a session store that never trims its log.
if [[ -e $build/lib/ruby/heaprec/heaprec_ext.so ]]; then
  echo >&2
  "$build/bin/heaprec" run --ruby -- ruby "$root/demo/ruby_sessions.rb" 200000
fi

peak=${final%.pb.gz}.peak.pb.gz
cat >&2 <<EOF

Next, from the top of the checkout ($(basename "$final") is the demo's final profile, $(basename "$peak") its peak):
  $heaprec report $peak
      the heap at its peak: the cache (ResponseCache::Insert, ~48 MiB) above the leak and the log
  $heaprec report --lines $final
      what was never freed (the shared_ptr cycle in SessionManager::Open), by source line
  $heaprec report --sample-index alloc_objects $peak
      who allocates most often: the per-request temporaries (ParseHeaders, ReadRequest, ...)
  $heaprec diff $peak $final
      from the peak to the exit: what the service freed when it shut down, and what it kept
  $heaprec flame $peak -o out/flame.html
      an interactive flame graph, one HTML file to open in a browser
  mkdir -p out/series && $heaprec run --dump-interval 0.5 -o out/series/heaprec.%e.%p.pb.gz -- $service
  $heaprec leaks out/series
      a profile every 0.5 s, then the sites whose live bytes keep growing (the cache levels off)
  $heaprec run --sample-interval 1 -- $service
      every allocation recorded: exact numbers, no error bars
  $heaprec run -- ./yourprogram ARGS
      your own program; \`$heaprec attach PID\` profiles one that is already running
  $heaprec help
      every command; \`$heaprec help COMMAND\` for its options
EOF
