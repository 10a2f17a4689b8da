"""What the on-disk peak profile costs: peak profiles written per run and the time spent writing
them, on the benchmark workloads at the default sampling interval.

    python3 bench/peak_cost.py [BUILD_DIR] [--rounds N] [--quick]

Every final profile carries peak_writes= and peak_write_us= (the dump thread's wall time spent
serializing and writing peak profiles, on its own thread beside the program); the workload's wall
time is measured around the run. Prints one Markdown table row per workload: the median over the
rounds, and the range."""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import comment_fields  # noqa: E402
from overhead import workloads  # noqa: E402
from run import Paths  # noqa: E402


def comments(paths, path):
    """The peak_* comment fields of a profile, as numbers."""
    fields = comment_fields(paths.heaprec, path)
    return {name: int(fields[name]) for name in ("peak_writes", "peak_write_us") if name in fields}


def run_once(paths, wl, lib):
    with tempfile.TemporaryDirectory(prefix="heaprec-peak-") as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPREC_")}
        env.update(wl.env)
        env["LD_PRELOAD"] = lib
        env["HEAPREC_OUTPUT"] = f"{d}/p.%e.%p.pb.gz"
        start = time.monotonic()
        done = subprocess.run(wl.full(d), cwd=d, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{wl.name} failed ({done.returncode}): {done.stderr[-2000:]}")
        wall = time.monotonic() - start
        writes = us = 0
        for f in glob.glob(f"{d}/p.*.pb.gz"):
            if ".peak." in f or f.endswith(".o"):
                continue
            c = comments(paths, f)
            writes += c.get("peak_writes", 0)
            us += c.get("peak_write_us", 0)
        return wall, writes, us / 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    paths = Paths(os.path.abspath(args.build))
    lib = os.path.join(paths.build, "lib", "libheaprec.so")
    print("| workload | wall (s) | peak profiles written | time writing them (s) | share of wall |")
    print("|---|---|---|---|---|")
    for wl in workloads(paths, args.quick):
        runs = [run_once(paths, wl, lib) for _ in range(args.rounds)]
        walls, writes, secs = zip(*runs)
        share = [s / w for w, s in zip(walls, secs)]
        print(f"| {wl.title} | {statistics.median(walls):.2f} | {statistics.median(writes):.0f} "
              f"[{min(writes)}-{max(writes)}] | {statistics.median(secs):.3f} "
              f"[{min(secs):.3f}-{max(secs):.3f}] | {100 * statistics.median(share):.1f}% |")


if __name__ == "__main__":
    main()
