#!/bin/sh
# run_micro.sh BUILD_DIR [EXTRA GOOGLE BENCHMARK ARGS...]
#
# Runs heaprec's microbenchmarks with the environment each needs and prints their tables:
#   micro_unsampled  LD_PRELOAD=BUILD_DIR/lib/libheaprec.so, HEAPREC_SAMPLE_INTERVAL=1024G (nothing
#                    sampled): real vs heaprec malloc/free, per op
#   micro_sampled    LD_PRELOAD, HEAPREC_SAMPLE_INTERVAL=1 (exact): sampled free; whole sampled path
#                    at stack depths 10/30/60, against the same descent calling glibc directly
#   micro_recorder   no preload: _Unwind_Backtrace alone, HeapRecorder::Record/Forget alone
#   dump_cost N      LD_PRELOAD, exact: heaprec_dump() with N live objects, one JSON line per N
#                    (N from DUMP_COST_N, default "100000 1000000"; DUMP_COST_N= skips it)
# The benchmarks also force their sampling mode through heaprec's API and refuse to report
# (ERROR OCCURRED) when heaprec is not loaded.
#
# On a noisy machine, e.g.:
#   bench/micro/run_micro.sh build --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
#       --benchmark_enable_random_interleaving=true
# and read the _median rows. Profiles heaprec writes at exit go to a temporary directory, removed.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [benchmark args...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
lib="$build/lib/libheaprec.so"
bin="$build/bench/micro"
for f in "$lib" "$bin/micro_unsampled" "$bin/micro_sampled" "$bin/micro_recorder" "$bin/dump_cost"; do
  [ -e "$f" ] || { echo "$0: $f not found: build first (ninja -C $build)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export HEAPREC_OUTPUT="$out/heaprec.%e.%p.pb.gz"

echo "== micro_unsampled (LD_PRELOAD, HEAPREC_SAMPLE_INTERVAL=1024G)"
LD_PRELOAD="$lib" HEAPREC_SAMPLE_INTERVAL=1024G "$bin/micro_unsampled" "$@"
echo "== micro_sampled (LD_PRELOAD, HEAPREC_SAMPLE_INTERVAL=1)"
LD_PRELOAD="$lib" HEAPREC_SAMPLE_INTERVAL=1 "$bin/micro_sampled" "$@"
echo "== micro_recorder (no preload)"
"$bin/micro_recorder" "$@"
for n in ${DUMP_COST_N-100000 1000000}; do
  echo "== dump_cost $n (LD_PRELOAD, HEAPREC_SAMPLE_INTERVAL=1)"
  LD_PRELOAD="$lib" HEAPREC_SAMPLE_INTERVAL=1 TMPDIR="$out" "$bin/dump_cost" "$n"
done
