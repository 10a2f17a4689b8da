#!/usr/bin/env python3
"""What `heaprec attach PID` costs (docs/benchmarks.md, "Attach"):

  python3 bench/attach_cost.py [BUILD_DIR]

1. Latency: 20 attach + detach cycles on an idle target (blocked in read()) and on a busy one
   (8 threads allocating): the wall time of `heaprec attach` (median, max), and how long the
   one held thread was stopped (the command reports it).
2. The walk of the heap before the attach: `heaprec attach` on a process holding 800 MiB in
   204,800 blocks of 4 KiB (attach_target bigheap), 5 times (a new process each): wall time.
3. Overhead: 3,000,000 malloc/free pairs (attach_target churn) never attached, attached, and
   attached then detached, interleaved in a rotating order, 11 rounds: the process's CPU time for
   the churn (the churning thread's own), and each round's ratio to never attached.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build")
heaprec = os.path.join(build, "bin", "heaprec")
target = os.path.join(build, "tests", "attach", "attach_target")


def start(mode):
    p = subprocess.Popen([target, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return p


def heaprec_cmd(*args):
    return subprocess.run([heaprec, *args], capture_output=True, text=True, check=True).stdout


def latency(mode, out):
    p = start(mode)
    walls, held = [], []
    for _ in range(20):
        t0 = time.monotonic()
        text = heaprec_cmd("attach", "-o", os.path.join(out, "p.%p.pb.gz"), str(p.pid))
        walls.append((time.monotonic() - t0) * 1000)
        held.append(float(re.search(r"held ([0-9.]+) ms", text).group(1)))
        heaprec_cmd("detach", str(p.pid))
    p.stdin.write("go\nend\n")
    p.stdin.close()
    p.wait()
    return walls, held


def big_heap_attach(out):
    p = start("bigheap")
    t0 = time.monotonic()
    heaprec_cmd("attach", "-o", os.path.join(out, "b.%p.pb.gz"), str(p.pid))
    wall = (time.monotonic() - t0) * 1000
    p.stdin.write("go\nend\n")
    p.stdin.close()
    p.wait()
    return wall


def churn(condition, out):
    p = start("churn")
    if condition in ("attached", "detached"):
        heaprec_cmd("attach", "-o", os.path.join(out, "c.%p.pb.gz"), str(p.pid))
    if condition == "detached":
        heaprec_cmd("detach", str(p.pid))
    p.stdin.write("go\n")
    p.stdin.flush()
    line = p.stdout.readline()
    p.stdin.close()
    p.wait()
    return int(line.split()[1]) / 1000.0


ROUNDS = 11


def describe(values):
    return f"median {statistics.median(values):.1f}, min {min(values):.1f}, max {max(values):.1f}"


with tempfile.TemporaryDirectory() as out:
    for mode, name in (("read", "idle"), ("threads", "busy (8 allocating threads)")):
        walls, held = latency(mode, out)
        print(f"attach latency, {name}: wall ms {describe(walls)}; thread held ms {describe(held)}")
    walls = [big_heap_attach(out) for _ in range(5)]
    print(f"attach with 800 MiB in 4 KiB blocks before it (walked): wall ms {describe(walls)}")
    conditions = ["never", "attached", "detached"]
    results = {c: [] for c in conditions}
    for round_number in range(ROUNDS):
        # A rotating order, so that no condition always runs first or last in a round.
        shift = round_number % len(conditions)
        for condition in conditions[shift:] + conditions[:shift]:
            results[condition].append(churn(condition, out))
    for condition in conditions:
        ratios = [v / n for v, n in zip(results[condition], results["never"])]
        print(f"churn CPU ms, {condition:>8}: {describe(results[condition])}; paired ratio to "
              f"never attached: median {statistics.median(ratios):.3f}, "
              f"min {min(ratios):.3f}, max {max(ratios):.3f}")
