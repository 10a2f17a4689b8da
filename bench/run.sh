#!/usr/bin/env bash
# One command for the benchmarks: installs what they need (as root, with apt-get, only if missing),
# builds heaprec into build-bench/ (or $HEAPREC_BUILD_DIR) and runs bench/run.py, passing on its
# arguments (--quick, --runs N, --only WORKLOAD, ...). Prints one table; also writes
# bench/results/<date>.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export HEAPREC_BUILD_DIR=${HEAPREC_BUILD_DIR:-$root/build-bench}

bash "$root/scripts/install-deps.sh"
packages=(libjemalloc2 libjemalloc-dev sqlite3 heaptrack valgrind python3 time make perl nodejs ruby llvm-14)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench: run as root (or install these packages yourself): ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

log=$(mktemp)
if ! bash "$root/scripts/build.sh" >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  rm -f "$log"
  echo "bench: build failed" >&2
  exit 1
fi
rm -f "$log"
exec python3 "$root/bench/run.py" --build-dir "$HEAPREC_BUILD_DIR" --no-build "$@"
