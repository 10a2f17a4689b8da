#!/usr/bin/env bash
# Instructions (callgrind) of one Ruby workload under heaprec's Ruby front end at the default,
# without and with the native bytes behind its objects sampled (issue 28 item 1), and with the
# do-nothing interposer preloaded instead (the floor of any preloaded allocator hook). Instruction
# counts do not depend on the machine's load, which CPU times on a shared machine do.
#
#   bench/ruby_native_instructions.sh BUILD_DIR WORKLOAD N     e.g. build json 2
#
# WORKLOAD N as bench/workloads/rb_cost.rb takes them. Prints one line per configuration:
# WORKLOAD CONFIGURATION INSTRUCTIONS.
set -euo pipefail
build=$(cd "$1" && pwd)
workload=$2
n=$3
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
heaprec=(RUBYLIB="$build/lib/ruby" RUBYOPT=-rheaprec/autorun HEAPREC_SAMPLE_EVERY=1000 HEAPREC_SEED=1
         HEAPREC_OUTPUT="$out/heap.%p.pb.gz")
for config in plain heaprec floor native; do
  case $config in
    plain) env=() ;;
    heaprec) env=("${heaprec[@]}") ;;
    floor) env=("${heaprec[@]}" LD_PRELOAD="$build/lib/libheaprec_floor.so") ;;
    native) env=("${heaprec[@]}" LD_PRELOAD="$build/lib/libheaprec.so" HEAPREC_RUNTIME=ruby) ;;
  esac
  env -u RUBYOPT -u RUBYLIB -u LD_PRELOAD "${env[@]}" valgrind --tool=callgrind \
    --callgrind-out-file="$out/$config.out" ruby "$here/workloads/rb_cost.rb" "$workload" "$n" \
    >/dev/null 2>"$out/$config.err"
  echo "$workload $config $(awk '/^summary:/ {print $2; exit}' "$out/$config.out")"
done
