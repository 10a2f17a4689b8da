#!/usr/bin/env python3
"""CPU time of the demo service under the do-nothing interposer and under two builds of heaprec,
interleaved in a rotating order (docs/benchmarks.md, "Part 15: the timeline's cost"):

  python3 bench/timeline_cost.py BUILD BEFORE_BUILD [ROUNDS]

BUILD is this tree's build directory (its floor, its service, its libheaprec.so); BEFORE_BUILD one of
an earlier commit (its libheaprec.so). Prints the median user+system CPU seconds of each, with the
range, and the ratio to the floor.
"""
import os
import statistics
import subprocess
import sys
import tempfile

build, before = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 15
libs = {"floor": os.path.join(build, "lib", "libheaprec_floor.so"),
        "before": os.path.join(before, "lib", "libheaprec.so"),
        "this tree": os.path.join(build, "lib", "libheaprec.so")}
prog = [os.path.join(build, "bin", "service")]
out = tempfile.mkdtemp(prefix="heaprec-timeline-cost-")
cpu = {name: [] for name in libs}
order = list(libs)
for r in range(rounds):
    for name in order[r % 3:] + order[:r % 3]:  # rotating: no configuration always runs first
        env = dict(os.environ, LD_PRELOAD=libs[name], HEAPREC_SEED="1",
                   HEAPREC_OUTPUT=os.path.join(out, "p.%p.pb.gz"))
        proc = subprocess.Popen(prog, env=env, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        cpu[name].append(usage.ru_utime + usage.ru_stime)
    for name in os.listdir(out):
        os.unlink(os.path.join(out, name))
floor = statistics.median(cpu["floor"])
for name, times in cpu.items():
    median = statistics.median(times)
    print(f"{name:10s} median {median:.3f} s CPU  [{min(times):.3f}-{max(times):.3f}]"
          f"  ratio to floor {median / floor:.3f}")
