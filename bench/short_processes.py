#!/usr/bin/env python3
"""What a short process costs under `heaprec run`, two heaprec builds against each other: the CPU
time (user + system, of every process of the run) of `heaprec run --no-symbolize` over a shell
that starts /usr/bin/python3 -c pass 100 times (each holds more than 64 KiB, so each keeps a heap
record), interleaved, A and B changing places every other round (docs/benchmarks.md, Part 14,
"the heap records' inodes"):

  python3 bench/short_processes.py HEAPREC_A HEAPREC_B [ROUNDS]

Prints each build's median CPU and wall time, and B/A per round. The profiles go under $TMPDIR:
set it to measure on another file system."""
import resource
import statistics
import subprocess
import sys
import tempfile
import time

builds = {"A": sys.argv[1], "B": sys.argv[2]}
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
program = ["sh", "-c", "for i in $(seq 100); do /usr/bin/python3 -c pass; done"]
cpu = {name: [] for name in builds}
wall = {name: [] for name in builds}
for r in range(rounds):
    for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
        with tempfile.TemporaryDirectory() as out:
            command = [builds[name], "run", "--top", "0", "--no-symbolize", "-o",
                       f"{out}/p.%p.pb.gz", "--", *program]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.monotonic()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            wall[name].append(time.monotonic() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
for name in builds:
    print(f"{name} CPU median {statistics.median(cpu[name]):.3f} s "
          f"({min(cpu[name]):.2f}-{max(cpu[name]):.2f}), "
          f"wall median {statistics.median(wall[name]):.3f} s")
ratios = [b / a for a, b in zip(cpu["A"], cpu["B"])]
print(f"B/A CPU median {statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f}); "
      f"A used less in {sum(x > 1 for x in ratios)} of {rounds} rounds")
