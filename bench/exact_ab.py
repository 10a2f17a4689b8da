"""Exact mode, two builds against glibc: CPU time of bench/exact_mode.py's malloc_stress and
python3 workloads under glibc alone, build A and build B (both with HEAPREC_SAMPLE_INTERVAL=1), in
rounds whose order rotates, A and B changing places every other round; each build's ratio to
glibc's CPU time in the same round.

  python3 bench/exact_ab.py BUILD_A BUILD_B [ROUNDS [WORKLOAD...]]   # ms1 ms2 ms4 py; ~6 min at 5

BUILD_B is any other build directory (cmake -S <checkout> -B dir; targets heaprec_preload and
malloc_stress). Prints one line per workload: median CPU of each and the ratios, median (min-max).
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def workloads(build):
    stress = os.path.join(build, "bin", "malloc_stress")
    return {
        "ms1": ([stress, "1", "8000000", "32768"], {}),
        "ms2": ([stress, "2", "4000000", "4096"], {}),
        "ms4": ([stress, "4", "2000000", "16384"], {}),
        "py": (["/usr/bin/python3", os.path.join(ROOT, "bench", "workloads", "py_alloc.py"),
                "150000"], {"PYTHONMALLOC": "malloc"}),
    }


def cpu_seconds(argv, env, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    a, b = (os.path.abspath(d) for d in sys.argv[1:3])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    table = workloads(a)
    for name in sys.argv[4:] or table:
        argv, extra = table[name]
        cpu = {"glibc": [], "A": [], "B": []}
        for r in range(rounds):
            out = tempfile.mkdtemp(prefix="heaprec-exact-ab.")
            base = dict(os.environ, **extra)
            configs = [("glibc", base)]
            for label, build in (("A", a), ("B", b)):
                configs.append((label, dict(base, HEAPREC_SAMPLE_INTERVAL="1",
                                            LD_PRELOAD=os.path.join(build, "lib", "libheaprec.so"),
                                            HEAPREC_OUTPUT=f"{out}/p.%e.%p.pb.gz")))
            if r % 2 == 1:  # A and B change places every other round, not only the rotation
                configs = [configs[0], configs[2], configs[1]]
            configs = configs[r % 3:] + configs[:r % 3]
            for label, env in configs:
                cpu[label].append(cpu_seconds(argv, env, out))
            shutil.rmtree(out, ignore_errors=True)
        line = [f"{name}:"] + [f"{k} {statistics.median(v):.2f}s" for k, v in cpu.items()]
        for label in ("A", "B"):
            ratios = [x / g for x, g in zip(cpu[label], cpu["glibc"])]
            line.append(f"{label}/glibc {statistics.median(ratios):.2f} "
                        f"({min(ratios):.2f}-{max(ratios):.2f})")
        print("  ".join(line), flush=True)


if __name__ == "__main__":
    main()
