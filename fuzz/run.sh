#!/usr/bin/env bash
# Builds heaprec's libFuzzer targets and runs each for a while; CI calls it briefly (fuzz/run.sh 13).
#
#   fuzz/run.sh [SECONDS] [FUZZER...]     SECONDS per fuzzer (default 30); all fuzzers by default
#
# Installs clang-14 and libclang-rt-14-dev with apt-get when they are missing, builds into
# $FUZZ_BUILD_DIR (default build-fuzz/ at the top of the repository), replays the reproducers kept
# under fuzz/crashes/<fuzzer>/, then fuzzes in a temporary copy of fuzz/corpus/<corpus>/ (the
# checked-in corpus is never modified). Prints one summary line per fuzzer and exits 0, or exits 1
# naming the file that reproduces the crash (kept under $FUZZ_BUILD_DIR/artifacts/).
#
# Environment: FUZZ_BUILD_DIR as above; FUZZ_CORPUS_OUT=DIR keeps the grown corpora in
# DIR/<fuzzer>/.
set -euo pipefail

seconds=${1:-30}
shift || true
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "usage: fuzz/run.sh [SECONDS] [FUZZER...]" >&2
  exit 2
fi

fuzz_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$fuzz_dir/.." && pwd)
build=${FUZZ_BUILD_DIR:-$repo/build-fuzz}

# fuzzer name, corpus directory, extra libFuzzer flags
declare -A corpus=([pprof_reader_fuzzer]=pprof [settings_fuzzer]=settings [http_request_fuzzer]=http)
declare -A flags=(
  [pprof_reader_fuzzer]="-max_len=8192"
  [settings_fuzzer]="-max_len=5000 -dict=$fuzz_dir/settings.dict"
  [http_request_fuzzer]="-max_len=9000 -dict=$fuzz_dir/http.dict"
)
fuzzers=("$@")
((${#fuzzers[@]})) || fuzzers=(pprof_reader_fuzzer settings_fuzzer http_request_fuzzer)
for f in "${fuzzers[@]}"; do
  [[ -n ${corpus[$f]:-} ]] || { echo "fuzz/run.sh: unknown fuzzer $f" >&2; exit 2; }
done

# --- toolchain -----------------------------------------------------------------------------------
have_toolchain() {
  command -v clang++-14 >/dev/null && command -v clang-14 >/dev/null &&
    compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null
}
if ! have_toolchain; then
  sudo=""
  ((EUID == 0)) || sudo="sudo"
  echo "fuzz/run.sh: installing clang-14 and libclang-rt-14-dev" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang-14 libclang-rt-14-dev \
    cmake ninja-build zlib1g-dev libprotozero-dev >/dev/null
fi

# --- build ---------------------------------------------------------------------------------------
log=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$work" "$log"' EXIT
if ! { CC=clang-14 CXX=clang++-14 cmake -S "$fuzz_dir" -B "$build" -G Ninja &&
  ninja -C "$build" "${fuzzers[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "fuzz/run.sh: build failed" >&2
  exit 1
fi

artifacts=$build/artifacts
mkdir -p "$artifacts"
common=(-rss_limit_mb=2048 -timeout=25 -print_final_stats=1)
status=0

for f in "${fuzzers[@]}"; do
  bin=$build/$f
  # 1. Reproducers of past crashes must not crash any more.
  shopt -s nullglob
  repros=("$fuzz_dir/crashes/$f"/*)
  shopt -u nullglob
  if ((${#repros[@]})) && ! "$bin" "${common[@]}" "${repros[@]}" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    repro=$(sed -n 's/^Running: //p' "$log" | tail -n 1)
    echo "fuzz/run.sh: $f: FAILED on reproducer ${repro:-in fuzz/crashes/$f/} (see above)" >&2
    status=1
    continue
  fi

  # 2. Fuzz, in a scratch copy of the corpus.
  scratch=$work/$f
  mkdir -p "$scratch"
  cp -r "$fuzz_dir/corpus/${corpus[$f]}/." "$scratch/"
  before=$(find "$scratch" -type f | wc -l)
  # shellcheck disable=SC2086  # flags are word lists
  if "$bin" "${common[@]}" ${flags[$f]} -max_total_time="$seconds" \
    -artifact_prefix="$artifacts/$f-" "$scratch" >"$log" 2>&1; then
    stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
    last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    after=$(find "$scratch" -type f | wc -l)
    printf '%s: ok: %s executions in %ss (%s/s), coverage %s edges, %s features, corpus %s -> %s files, peak RSS %s MB\n' \
      "$f" "$(stat number_of_executed_units)" "$seconds" "$(stat average_exec_per_sec)" \
      "${cov:-?}" "${ft:-?}" "$before" "$after" "$(stat peak_rss_mb)"
    if [[ -n ${FUZZ_CORPUS_OUT:-} ]]; then
      mkdir -p "$FUZZ_CORPUS_OUT/$f"
      cp -r "$scratch/." "$FUZZ_CORPUS_OUT/$f/"
    fi
  else
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    grep -E -A40 '^==[0-9]+==|BUG:|^SUMMARY' "$log" | head -n 80 >&2 || tail -n 60 "$log" >&2
    echo "fuzz/run.sh: $f: FAILED; reproducer: ${crash:-none written, see above}" >&2
    echo "  replay:   $bin ${crash:-FILE}" >&2
    echo "  minimize: $bin -minimize_crash=1 -max_total_time=60 ${crash:-FILE}" >&2
    status=1
  fi
done
exit $status
