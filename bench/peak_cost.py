"""What the peak profile and the heap record cost, on the benchmark workloads at the default
sampling interval.

    python3 bench/peak_cost.py [BUILD_DIR] [--rounds N] [--quick]

Every final profile carries peak_writes= and peak_write_us= (the dump thread's wall time spent
serializing and writing peak profiles, on its own thread beside the program), peak_captures= and
peak_capture_us= (the copies of the live set taken on the allocating threads, the heap record's
copy included) and heap_record_bytes= (the record file's size). Each round runs the workload with
the heap record and without it (HEAPREC_NO_HEAP_RECORD=1), interleaved, and compares the CPU time
(user + system of the whole process tree). Prints two Markdown tables, one row per workload: the
median over the rounds, and the range."""
import argparse
import glob
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import comment_fields  # noqa: E402
from overhead import workloads  # noqa: E402
from run import Paths  # noqa: E402


FIELDS = ("peak_writes", "peak_write_us", "peak_captures", "peak_capture_us", "heap_record_bytes")


def comments(paths, path):
    """The cost comment fields of a profile, as numbers."""
    fields = comment_fields(paths.heaprec, path)
    return {name: int(fields[name]) for name in FIELDS if name in fields}


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(paths, wl, lib, record=True):
    with tempfile.TemporaryDirectory(prefix="heaprec-peak-") as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEAPREC_")}
        env.update(wl.env)
        env["LD_PRELOAD"] = lib
        env["HEAPREC_OUTPUT"] = f"{d}/p.%e.%p.pb.gz"
        if not record:
            env["HEAPREC_NO_HEAP_RECORD"] = "1"
        cpu_before = children_cpu()
        start = time.monotonic()
        done = subprocess.run(wl.full(d), cwd=d, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{wl.name} failed ({done.returncode}): {done.stderr[-2000:]}")
        wall = time.monotonic() - start
        cpu = children_cpu() - cpu_before
        totals = dict.fromkeys(FIELDS, 0)
        for f in glob.glob(f"{d}/p.*.pb.gz"):
            if ".peak." in f or f.endswith(".o"):
                continue
            c = comments(paths, f)
            for name in FIELDS:
                if name == "heap_record_bytes":  # the largest process's record
                    totals[name] = max(totals[name], c.get(name, 0))
                else:
                    totals[name] += c.get(name, 0)
        return {"wall": wall, "cpu": cpu, **totals}


def cell(values, fmt):
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}-{fmt(max(values))}]"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    paths = Paths(os.path.abspath(args.build))
    lib = os.path.join(paths.build, "lib", "libheaprec.so")
    rows = []
    for wl in workloads(paths, args.quick):
        with_record, without = [], []
        for _ in range(args.rounds):  # interleaved: the machine's load changes alike for both
            with_record.append(run_once(paths, wl, lib, record=True))
            without.append(run_once(paths, wl, lib, record=False))
        rows.append((wl, with_record, without))
    print("| workload | wall (s) | peak profiles written | time writing them (s) "
          "| peak copies taken | time copying (ms, program threads) | heap record file |")
    print("|---|---|---|---|---|---|---|")
    for wl, runs, _ in rows:
        col = lambda name: [r[name] for r in runs]  # noqa: E731
        print(f"| {wl.title} | {statistics.median(col('wall')):.2f} "
              f"| {cell(col('peak_writes'), lambda v: f'{v:.0f}')} "
              f"| {cell([v / 1e6 for v in col('peak_write_us')], lambda v: f'{v:.3f}')} "
              f"| {cell(col('peak_captures'), lambda v: f'{v:.0f}')} "
              f"| {cell([v / 1e3 for v in col('peak_capture_us')], lambda v: f'{v:.1f}')} "
              f"| {cell([v / 2**20 for v in col('heap_record_bytes')], lambda v: f'{v:.1f}')} MiB |")
    print()
    print("| workload | CPU with the heap record (s) | CPU without (s) | ratio (per round) |")
    print("|---|---|---|---|")
    for wl, runs, base in rows:
        ratios = [r["cpu"] / b["cpu"] for r, b in zip(runs, base)]
        print(f"| {wl.title} | {cell([r['cpu'] for r in runs], lambda v: f'{v:.2f}')} "
              f"| {cell([b['cpu'] for b in base], lambda v: f'{v:.2f}')} "
              f"| {cell(ratios, lambda v: f'{v:.3f}')} |")


if __name__ == "__main__":
    main()
