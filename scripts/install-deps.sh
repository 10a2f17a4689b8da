#!/usr/bin/env bash
# Installs what heaprec needs on Debian 12, as root. Skips apt entirely when every package is
# already there, so repeated runs cost nothing.
#
#   scripts/install-deps.sh           everything: build heaprec and run the whole test suite and the
#                                     benchmarks' builds (scripts/test.sh, bench/run.sh)
#   scripts/install-deps.sh --demo    only what scripts/demo.sh needs: build heaprec, its library,
#                                     the flame-graph page and the Ruby front end, and run the demos
set -euo pipefail

profile=all
case ${1:-} in
  "") ;;
  --demo) profile=demo ;;
  *)
    echo "install-deps: unknown argument '$1' (usage: scripts/install-deps.sh [--demo])" >&2
    exit 2
    ;;
esac

# What building heaprec (tests and benchmarks off) and running the demos need.
packages=(
  build-essential cmake ninja-build pkg-config binutils
  libgcc-s1           # stack unwinding in the profiled process (libgcc_s, loaded privately)
  libdw-dev libelf-dev  # symbolization (elfutils), outside the profiled process
  libiberty-dev       # demangling Rust names (GNU libiberty, static), in the heaprec command only
  libdebuginfod-dev   # symbolization: debug files fetched by build id from debuginfod servers
  libcurl4-openssl-dev  # heaprec run --push / heaprec agent: HTTP(S) to Pyroscope (the CLI only)
  zlib1g-dev          # gzip of profiles
  libdeflate-dev      # the CLI's gzip of the profiles it writes (faster than zlib's, same format)
  libzstd-dev         # recognizing zstd files (heaptrack's recordings) handed to the CLI
  libprotozero-dev    # protobuf wire format, header-only
  libcli11-dev        # command-line parsing
  ruby ruby-dev       # the Ruby front end (ruby/): headers and libruby for its extension; minitest
)
# What only the test suite, its formatting check and the benchmarks' builds need.
if [ "$profile" = all ]; then
  packages+=(
    python3
    clang-format        # scripts/check-format.sh, which scripts/test.sh runs before building
    libgtest-dev libgmock-dev libbenchmark-dev
    debuginfod          # the server tests/cli starts on loopback to test fetching debug files
    golang-go golang-github-google-pprof-dev  # the standalone pprof used to validate our output
    libdevel-nytprof-perl  # ships flamegraph.pl, which reads `report --format folded` in tests/cli
    rustc               # tests/e2e: builds the Rust program profiled end to end (no cargo needed)
    chromium            # headless browser for the flame-graph page test (tests/cli)
    # tests/reliability: other allocators beside heaprec, and real programs run under it
    libjemalloc2 libtcmalloc-minimal4 sqlite3 git perl
    heaptrack           # tests/cli: a real heaptrack recording, which heaprec must recognize
    procps util-linux   # tests/e2e: pgrep, and unshare for the container test's pid namespace
    gdb                 # tests/attach: a debugger attached after heaprec reads its library
    strace              # tests/attach: a thread another tracer holds is not heaprec's to take
    lintian             # tests/package: checks the Debian package CPack makes
  )
fi
# Node.js and npm install the flame-graph page's packages at build time (web/package-lock.json).
# The machines come with them (Node.js 20, npm bundled); Debian's packages only where they are missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "heaprec: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "heaprec: run as root (or install these packages yourself): ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
