#!/usr/bin/env python3
"""`heaprec run -- make -s -j2` of the 100-file C library (bench/workloads/make_clib.py, ~300
processes) with two heaprec builds, interleaved, against the plain make (docs/benchmarks.md,
"Many processes: the end of the run"):

  python3 bench/end_of_run.py HEAPREC_A HEAPREC_B [ROUNDS] [--keep]

Each round (default 3) runs, in a rotating order in which A and B change places every other round:
plain, A and B at the default interval, A and B in exact mode (--sample-interval 1), each in a
fresh copy of the sources. An even number of rounds puts each build in each place equally often.
Prints wall-time medians (min-max), each configuration's paired ratio to the round's plain make,
and for each mode B's ratio to A in the same round (and in how many rounds B was the faster).
The sources and profiles are made under $TMPDIR: set it to measure on another file system.
Each run's tree is deleted before the next run, unless --keep: then all are kept until the end.
On ext4 without a journal (this project's VMs) every file created in the minutes after many were
deleted costs about a millisecond more (ext4's walk past recently freed inodes), so a run that
follows a deletion pays for each of its files, and heaprec run creates about 500 more than the
plain make (docs/benchmarks.md, "the rewrite's fsyncs").
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from harness import rotated, write_make_clib

keep = "--keep" in sys.argv[1:]
args = [a for a in sys.argv[1:] if a != "--keep"]
heaprecs = {"A": args[0], "B": args[1]}
rounds = int(args[2]) if len(args) > 2 else 3
configs = [("plain", None, [])]
for name, binary in heaprecs.items():
    configs.append((f"{name} default", binary, []))
    configs.append((f"{name} exact", binary, ["--sample-interval", "1"]))


def one(binary, flags, root):
    src = os.path.join(root, "src")
    os.makedirs(src)
    write_make_clib(src)
    out = os.path.join(root, "profiles")
    os.makedirs(out)
    cmd = ["make", "-s", "-j2"]
    if binary:
        cmd = [binary, "run", *flags, "-o", f"{out}/p.%e.%p.pb.gz", "--", *cmd]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "HEAPREC_"))}
    start = time.monotonic()
    subprocess.run(cmd, cwd=src, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start


walls = {c[0]: [] for c in configs}
ratios = {c[0]: [] for c in configs}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(rounds):
        # Rotated, and A's and B's runs change places every other round: with a fixed cyclic
        # order one build's default run always followed the plain make and the other's followed
        # an exact run, and the slot alone moved the ratio by 5% (docs/benchmarks.md, 2026-12-06).
        base = configs if r % 2 == 0 else [configs[0], *configs[3:], *configs[1:3]]
        order = rotated(base, r)
        got = {}
        for name, binary, flags in order:
            root = os.path.join(tmp, f"{r}-{name.replace(' ', '-')}")
            got[name] = one(binary, flags, root)
            if not keep:
                shutil.rmtree(root, ignore_errors=True)
        for name in got:
            walls[name].append(got[name])
            ratios[name].append(got[name] / got["plain"])
        print(f"round {r + 1}: " + "  ".join(f"{n} {got[n]:.2f} s" for n, _, _ in configs),
              flush=True)
for name, _, _ in configs:
    w, q = walls[name], ratios[name]
    print(f"{name:10} wall median {statistics.median(w):.2f} s ({min(w):.2f}-{max(w):.2f}); "
          f"to plain {statistics.median(q):.2f}x ({min(q):.2f}-{max(q):.2f})")
for mode in ("default", "exact"):
    q = [b / a for a, b in zip(walls[f"A {mode}"], walls[f"B {mode}"])]
    print(f"B/A {mode:7} median {statistics.median(q):.3f} ({min(q):.2f}-{max(q):.2f}); "
          f"B faster in {sum(x < 1 for x in q)} of {len(q)} rounds")
