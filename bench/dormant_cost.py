#!/usr/bin/python3
"""Dormant mode's cost (docs/benchmarks.md, "Dormant mode"): a process started with
HEAPREC_DORMANT=1 and never attached, against glibc alone, the do-nothing interposer (bench/floor)
and heaprec sampling at the default interval.

Three measures, each on bench/workloads/malloc_stress (random sizes, random slots, cross-thread
frees: many addresses in random order):
  instructions  callgrind's instruction count (Ir) of the whole run, deterministic (fixed seeds);
  CPU time      user + system, in interleaved rounds whose order rotates (hot_paths.interleave);
  memory        VmRSS of tests/workloads/wl_dormant idle after its start-up (about 1.4 MiB of
                heap), and once more after `heaprec attach` and its first sampled allocations.

    /usr/bin/python3 bench/dormant_cost.py --build-dir build [--floor lib.so] [--stress bin]
                                           [--idle wl_dormant] [--rounds 5] [--quick]

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
    elif cfg in ("dormant", "heaprec", "attached"):
        env.update(LD_PRELOAD=lib, HEAPREC_OUTPUT=f"{d}/p.%e.%p.pb.gz")
        if cfg == "dormant":
            dormant_dirs.append(d)  # never attached: must stay empty
        if cfg in ("dormant", "attached"):
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


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def idle_rss(cfg, idle, heaprec, lib, floor, d):
    """VmRSS, RssAnon and RssFile (KiB) of tests/workloads/wl_dormant once it says "ready" (its start-up allocations
    done: 1 MiB and 4,000 small blocks), under `cfg`; "attached" is dormant, then heaprec attach."""
    env = environment(cfg, lib, floor, d)
    p = subprocess.Popen([idle], env=env, cwd=d, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        p.stdout.readline()  # "ready PID"
        if cfg == "attached":
            subprocess.run([heaprec, "attach", str(p.pid)], check=True, stdout=subprocess.DEVNULL)
            p.stdin.write("alloc_attached\n")  # the first sampled allocations after the attach
            p.stdin.flush()
            p.stdout.readline()
        return tuple(status_kib(p.pid, f) for f in ("VmRSS", "RssAnon", "RssFile"))
    finally:
        p.stdin.write("exit\n")
        p.stdin.close()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.environ.get("HEAPREC_BUILD_DIR", "build"))
    ap.add_argument("--floor", help="libheaprec_floor.so (default: BUILD/lib)")
    ap.add_argument("--stress", help="malloc_stress (default: BUILD/bin)")
    ap.add_argument("--idle", help="tests/workloads/wl_dormant (default: BUILD/tests/e2e/workloads)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    a = ap.parse_args()
    lib = os.path.join(a.build_dir, "lib", "libheaprec.so")
    floor = a.floor or os.path.join(a.build_dir, "lib", "libheaprec_floor.so")
    stress = a.stress or os.path.join(a.build_dir, "bin", "malloc_stress")
    idle = a.idle or os.path.join(a.build_dir, "tests", "e2e", "workloads", "wl_dormant")
    heaprec = os.path.join(a.build_dir, "bin", "heaprec")
    lib, floor, stress, idle, heaprec = (os.path.abspath(p)
                                         for p in (lib, floor, stress, idle, heaprec))
    for f in (lib, floor, stress, idle, heaprec):
        if not os.path.exists(f):
            sys.exit(f"dormant_cost.py: {f} is missing")
    scale = 10 if a.quick else 1
    grind = [stress, "4", str(200000 // scale), "4096"]
    cpu_runs = [("1 thread", [stress, "1", str(4000000 // scale), "32768"]),
                ("4 threads", [stress, "4", str(2000000 // scale), "16384"])]
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

    print("## memory of the idle workload after its start-up (KiB), median of 5")
    fields = ("VmRSS", "RssAnon", "RssFile")
    rss = {c: [Series() for _ in fields] for c in CONFIGS + ("attached",)}
    for _ in range(5):
        for cfg in rss:
            d = tempfile.mkdtemp(dir=root)
            for series, value in zip(rss[cfg], idle_rss(cfg, idle, heaprec, lib, floor, d)):
                series.add(value)
    print("  " + " " * 8 + "".join(f"{f:>10}" for f in fields))
    for cfg in rss:
        print(f"  {cfg:8}" + "".join(f"{s.median():>10.0f}" for s in rss[cfg]))
    # A dormant process that was never attached writes nothing: its directories must be empty.
    for d in dormant_dirs:
        left = [f for f in os.listdir(d) if f.endswith(".pb.gz")]
        if left:
            sys.exit(f"dormant_cost.py: a dormant run wrote {left}")
    print(f"  ({len(dormant_dirs)} dormant runs, no profile written)")


if __name__ == "__main__":
    main()
