#!/usr/bin/env python3
"""What the heap record costs a program that forks a lot: the CPU time of bash running 500 command
substitutions ($(...): a fork each), preloaded with and without the heap record
(HEAPREC_NO_HEAP_RECORD=1), interleaved; median of 5 rounds.

    python3 bench/fork_record_cost.py [BUILD_DIR]"""
import os, resource, statistics, subprocess, sys, tempfile
lib = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "build", "lib", "libheaprec.so")
def run(record):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, LD_PRELOAD=lib, HEAPREC_OUTPUT=f"{d}/p.%p.pb.gz")
        if not record:
            env["HEAPREC_NO_HEAP_RECORD"] = "1"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(["bash", "-c", 'for i in $(seq 500); do x=$(echo $i); done'], env=env, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
with_r, without = [], []
for _ in range(5):
    with_r.append(run(True)); without.append(run(False))
print(f"with record {statistics.median(with_r):.3f} s, without {statistics.median(without):.3f} s, "
      f"ratio {statistics.median([a / b for a, b in zip(with_r, without)]):.3f}, "
      f"per fork {1e6 * (statistics.median(with_r) - statistics.median(without)) / 500:.0f} us")
