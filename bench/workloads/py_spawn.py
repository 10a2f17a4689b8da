"""Python multiprocessing with the spawn start method: every worker is a fresh interpreter (an exec
of python3), so a profiler pays its start-up in each, and each builds and returns its own data.

    python3 py_spawn.py [TASKS]      (default 16 tasks over 2 workers)
"""
import multiprocessing
import sys


def task(seed):
    rows = {f"{seed}-{i}": [str(i) * 3, (i, seed), {"n": i}] for i in range(20000)}
    return sum(len(v[0]) for v in rows.values())


def main():
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        print(sum(pool.map(task, range(tasks))))


if __name__ == "__main__":
    main()
