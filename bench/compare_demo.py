#!/usr/bin/env python3
"""heaprec, heaptrack and Valgrind massif on the same program: the demo service (demo/service.cc).

Runs the program plain and under each tool, ROUNDS times, the configurations interleaved in a
rotating order (A B C D, then B C D A, ...), and prints for each the median [min-max] wall time, CPU
time (user + system of every process) and peak RSS of the largest process, each as measured by
wait4(2) on the command, plus the median time of the tool's own analysis step where it has one
(heaptrack_print, ms_print; heaprec run symbolizes and prints its report before it exits, so its
wall time includes them). Writes each tool's first screen (its output) under OUT for reading.

  python3 bench/compare_demo.py [--build-dir build] [--rounds 3] [--out /tmp/compare-demo]

Needs heaptrack and valgrind (bench/run.sh installs both); docs/benchmarks.md ("Compared with
heaptrack and massif (demo)") has the figures it printed.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def run(argv, cwd, stdout_path):
    """Runs argv; returns (wall s, cpu s, max RSS KiB of the largest process)."""
    with open(stdout_path, "w") as out:
        start = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"compare_demo: {' '.join(argv)} failed ({stdout_path})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="/tmp/compare-demo")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    service = os.path.join(build, "bin", "service")
    heaprec = os.path.join(build, "bin", "heaprec")
    for tool in ("heaptrack", "heaptrack_print", "valgrind", "ms_print"):
        if not shutil.which(tool):
            sys.exit(f"compare_demo: {tool} is missing (apt-get install heaptrack valgrind)")
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)

    def configs(d):
        return {
            "plain": ([service], None),
            "heaprec": ([heaprec, "run", "-o", f"{d}/heaprec.%e.%p.pb.gz", "--", service], None),
            "heaptrack": (["heaptrack", "-o", f"{d}/heaptrack", service],
                          ["heaptrack_print", f"{d}/heaptrack.zst"]),
            "massif": (["valgrind", "--tool=massif", f"--massif-out-file={d}/massif.out", service],
                       ["ms_print", f"{d}/massif.out"]),
        }

    names = list(configs("").keys())
    results = {name: [] for name in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            d = os.path.join(args.out, f"{name}.{r}")
            os.makedirs(d)
            command, analysis = configs(d)[name]
            wall, cpu, rss = run(command, d, f"{d}/run.txt")
            analysis_wall = None
            if analysis:
                analysis_wall, _, _ = run(analysis, d, f"{d}/analysis.txt")
            results[name].append((wall, cpu, rss, analysis_wall))
            print(f"round {r + 1} {name}: wall {wall:.2f} s, cpu {cpu:.2f} s, "
                  f"max RSS {rss / 1024:.0f} MiB"
                  + (f", analysis {analysis_wall:.2f} s" if analysis_wall else ""), flush=True)

    def fmt(values, unit, scale=1.0, digits=2):
        values = [v * scale for v in values]
        return (f"{statistics.median(values):.{digits}f} {unit} "
                f"[{min(values):.{digits}f}-{max(values):.{digits}f}]")

    base_wall = statistics.median(w for w, _, _, _ in results["plain"])
    base_cpu = statistics.median(c for _, c, _, _ in results["plain"])
    print(f"\n| tool | wall time | vs plain | CPU time | vs plain | peak RSS | analysis step |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        rows = results[name]
        wall = statistics.median(w for w, _, _, _ in rows)
        cpu = statistics.median(c for _, c, _, _ in rows)
        analysis = [a for _, _, _, a in rows if a is not None]
        print(f"| {name} | {fmt([w for w, _, _, _ in rows], 's')} | {wall / base_wall:.2f}x | "
              f"{fmt([c for _, c, _, _ in rows], 's')} | {cpu / base_cpu:.2f}x | "
              f"{fmt([m for _, _, m, _ in rows], 'MiB', 1 / 1024, 0)} | "
              f"{fmt(analysis, 's') if analysis else '-'} |")


if __name__ == "__main__":
    main()
