#!/usr/bin/env python3
"""Where a short program's cost under heaprec goes, by settings: the CPU time of PROGRAM plain,
under the do-nothing interposer and under BUILD_DIR's libheaprec.so with the settings `heaprec run`
gives it, then with one thing changed at a time (docs/benchmarks.md, "Many processes"):

  python3 bench/process_settings.py BUILD_DIR ROUNDS -- PROGRAM [ARGS...]

  no samples     HEAPREC_SAMPLE_INTERVAL=1G: the fixed cost of a process
  fp walks       HEAPREC_UNWIND=fp: what the CFI walker's first lookups cost
  no record      HEAPREC_NO_HEAP_RECORD=1: the heap record
  tmpfs          the profiles on /dev/shm: what the disk's file creation costs

Each round runs every configuration once, in an order shuffled by a fixed seed; CPU time is user +
system of the process and its children (os.wait4). Prints each configuration's mean over plain and
its difference to the default configuration paired by round, with the standard error.
"""
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interleave import cpu_ms_by_config  # noqa: E402

args = sys.argv[1:]
split = args.index("--")
(build, rounds), program = args[:split], args[split + 1:]
rounds = int(rounds)

base = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "HEAPREC_"))}
disk = tempfile.mkdtemp(prefix="heaprec-settings-")
shm = tempfile.mkdtemp(prefix="heaprec-settings-", dir="/dev/shm")


def run_settings(directory):
    manifest = os.path.join(directory, "manifest")
    open(manifest, "w").close()
    # What `heaprec run` sets for a native program it symbolizes (cli/run_environment.cc).
    return {"LD_PRELOAD": f"{build}/lib/libheaprec.so", "HEAPREC_UNCOMPRESSED": "1",
            "HEAPREC_OUTPUT": os.path.join(directory, "p.%p.pb.gz"), "HEAPREC_MANIFEST": manifest}


default = run_settings(disk)
configs = {"plain": {}, "floor": {"LD_PRELOAD": f"{build}/lib/libheaprec_floor.so"},
           "default": default,
           "no samples": dict(default, HEAPREC_SAMPLE_INTERVAL="1G"),
           "fp walks": dict(default, HEAPREC_UNWIND="fp"),
           "no record": dict(default, HEAPREC_NO_HEAP_RECORD="1"),
           "tmpfs": run_settings(shm)}


def clear_profiles(r):
    if r % 10 == 9:  # the profiles, a few KB each
        for directory in (disk, shm):
            for f in os.listdir(directory):
                if f != "manifest":
                    os.unlink(os.path.join(directory, f))


try:
    cpu = cpu_ms_by_config(program, base, configs, rounds, clear_profiles)
finally:
    shutil.rmtree(disk, ignore_errors=True)
    shutil.rmtree(shm, ignore_errors=True)


def paired(a, b):
    differences = [x - y for x, y in zip(a, b)]
    return statistics.mean(differences), statistics.stdev(differences) / len(differences) ** 0.5


for name, values in cpu.items():
    over, _ = paired(values, cpu["plain"])
    line = f"{name:11} {statistics.mean(values):9.3f} ms   over plain {over:+8.3f} ms"
    if name not in ("plain", "floor", "default"):
        difference, error = paired(values, cpu["default"])
        line += f"   against default {difference:+8.3f} ms ±{error:.3f}"
    print(line)
