#!/usr/bin/python3
"""Dormant mode's cost (docs/benchmarks.md, "Dormant mode"): a process started with
HEAPREC_DORMANT=1 and never attached, against glibc alone, the do-nothing interposer (bench/floor)
and heaprec sampling at the default interval.

Three measures, each on bench/workloads/malloc_stress (random sizes, random slots, cross-thread
frees: many addresses in random order):
  instructions  callgrind's instruction count (Ir) of the whole run, deterministic (fixed seeds);
  CPU time      user + system, in interleaved rounds whose order rotates (hot_paths.interleave);
  memory        ru_maxrss of a run with a tiny heap (1 thread, 2,000 operations, 16 live blocks),
                where the profiler's own pages are most of the difference.

    /usr/bin/python3 bench/dormant_cost.py --build-dir build [--floor lib.so] [--stress bin]
                                           [--rounds 5] [--quick]

The build needs HEAPREC_BUILD_BENCHMARKS=ON for libheaprec_floor.so and malloc_stress, or give
them with --floor and --stress (a hand build: g++ -O2 -shared -fPIC bench/floor/floor_preload.cc;
g++ -O2 -pthread bench/workloads/malloc_stress.cc).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Series, clean_env, run  # noqa: E402

CONFIGS = ("glibc", "floor", "dormant", "heaprec")


dormant_dirs = []


def environment(cfg, lib, floor, d):
    env = clean_env()
    if cfg == "floor":
        env["LD_PRELOAD"] = floor
    elif cfg in ("dormant", "heaprec"):
        env.update(LD_PRELOAD=lib, HEAPREC_OUTPUT=f"{d}/p.%e.%p.pb.gz")
        if cfg == "dormant":
            dormant_dirs.append(d)
            env.update(HEAPREC_DORMANT="1", HEAPREC_DUMP_SIGNAL="SIGUSR2")
    return env


def instructions(argv, env, d):
    """callgrind's total instruction count for one run of argv."""
    out = os.path.join(d, "callgrind.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv,
                   env=env, cwd=d, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals): (\d+)", line)
            if m:
                return int(m.group(2))
    raise RuntimeError("no instruction total in " + out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.environ.get("HEAPREC_BUILD_DIR", "build"))
    ap.add_argument("--floor", help="libheaprec_floor.so (default: BUILD/lib)")
    ap.add_argument("--stress", help="malloc_stress (default: BUILD/bin)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    a = ap.parse_args()
    lib = os.path.join(a.build_dir, "lib", "libheaprec.so")
    floor = a.floor or os.path.join(a.build_dir, "lib", "libheaprec_floor.so")
    stress = a.stress or os.path.join(a.build_dir, "bin", "malloc_stress")
    lib, floor, stress = (os.path.abspath(p) for p in (lib, floor, stress))
    for f in (lib, floor, stress):
        if not os.path.exists(f):
            sys.exit(f"dormant_cost.py: {f} is missing")
    scale = 10 if a.quick else 1
    grind = [stress, "4", str(200000 // scale), "4096"]
    cpu_runs = [("1 thread", [stress, "1", str(4000000 // scale), "32768"]),
                ("4 threads", [stress, "4", str(2000000 // scale), "16384"])]
    tiny = [stress, "1", "2000", "16"]
    root = tempfile.mkdtemp(prefix="heaprec-dormant-bench-")

    print(f"## instructions (callgrind), malloc_stress {' '.join(grind[1:])}")
    counts = {}
    for cfg in CONFIGS:
        d = tempfile.mkdtemp(dir=root)
        counts[cfg] = instructions(grind, environment(cfg, lib, floor, d), d)
    for cfg in CONFIGS:
        print(f"  {cfg:8} {counts[cfg]:>14,} Ir   {counts[cfg] / counts['floor']:.4f}x floor")

    for title, argv in cpu_runs:
        print(f"## CPU time, malloc_stress {' '.join(argv[1:])} ({title}), {a.rounds} rounds")
        cpu = {c: Series() for c in CONFIGS}
        ratio = Series()
        for r in range(a.rounds):
            k = r % len(CONFIGS)
            got = {}
            for cfg in CONFIGS[k:] + CONFIGS[:k]:
                d = tempfile.mkdtemp(dir=root)
                res = run(argv, env=environment(cfg, lib, floor, d), cwd=d, timeout=1800)
                if not res.ok:
                    sys.exit(f"dormant_cost.py: {cfg} failed: {res.why()}")
                got[cfg] = res.cpu
                cpu[cfg].add(res.cpu)
            ratio.add(got["dormant"] / got["floor"])
            print("  round {}: ".format(r + 1) +
                  "  ".join(f"{c} {got[c]:.3f}" for c in CONFIGS) + " s")
        print("  median: " + "  ".join(f"{c} {cpu[c].median():.3f}" for c in CONFIGS) +
              f" s; dormant / floor {ratio.fmt('.3f', 'x')}")

    print("## memory (ru_maxrss), malloc_stress 1 2000 16, median of 5")
    rss = {c: Series() for c in CONFIGS}
    for _ in range(5):
        for cfg in CONFIGS:
            d = tempfile.mkdtemp(dir=root)
            rss[cfg].add(run(tiny, env=environment(cfg, lib, floor, d), cwd=d).maxrss_kib)
    for cfg in CONFIGS:
        print(f"  {cfg:8} {rss[cfg].median():>8.0f} KiB")
    # A dormant process that was never attached writes nothing: its directories must be empty.
    for d in dormant_dirs:
        left = [f for f in os.listdir(d) if f.endswith(".pb.gz")]
        if left:
            sys.exit(f"dormant_cost.py: a dormant run wrote {left}")
    print(f"  ({len(dormant_dirs)} dormant runs, no profile written)")


if __name__ == "__main__":
    main()
