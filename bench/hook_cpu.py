#!/usr/bin/env python3
"""CPU time of the 2-thread churn under the floor and under heaprec, interleaved
(docs/benchmarks.md, "The hooks: CPU time"):

  python3 bench/hook_cpu.py [BUILD_DIR [ROUNDS [OTHER_LIBHEAPREC...]]]

malloc_stress 2 3000000 4096 (two threads, 16 B-64 KiB, cross-thread frees), default interval,
under LD_PRELOAD of the do-nothing interposer (bench/floor) and of libheaprec.so (and of any other
libheaprec.so named, e.g. an older build), in a rotating order each round (default 11 rounds).
Prints each configuration's CPU time (user + system of the process) and its paired ratio to the
floor's in the same round: median and min-max.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
stress = os.path.join(build, "bin", "malloc_stress")
configs = {"floor": os.path.join(build, "lib", "libheaprec_floor.so"),
           "heaprec": os.path.join(build, "lib", "libheaprec.so")}
for i, other in enumerate(sys.argv[3:]):
    configs[f"heaprec ({other})"] = other


def cpu_seconds(library, out):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(LD_PRELOAD=library, HEAPREC_OUTPUT=os.path.join(out, "p.%p.pb.gz"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([stress, "2", "3000000", "4096"], env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


names = list(configs)
times = {n: [] for n in names}
with tempfile.TemporaryDirectory() as out:
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(cpu_seconds(configs[name], out))
for name in names:
    ratios = [t / f for t, f in zip(times[name], times["floor"])]
    print(f"{name}: CPU s median {statistics.median(times[name]):.3f} "
          f"({min(times[name]):.3f}-{max(times[name]):.3f}); ratio to floor median "
          f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
