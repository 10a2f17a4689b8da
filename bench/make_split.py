#!/usr/bin/env python3
"""Where `heaprec run`'s cost on a parallel make comes from (docs/benchmarks.md, "Many processes:
where the make's overhead goes"):

  python3 bench/make_split.py HEAPREC [ROUNDS] [VAR=VALUE...] [run:VAR=VALUE...] [--keep]
                                                                   # ~30 s a round

`make -s -j2` of the 100-file C library bench/workloads/make_clib.py writes (about 300 processes),
each round five ways (and one more for each VAR=VALUE or run:VAR=VALUE) in a rotating order, each
in a fresh copy of the sources:
  plain      the make alone
  preload    every process under HEAPREC's library (LD_PRELOAD) with the settings `heaprec run`
             gives a native program (profiles stored uncompressed, a manifest), and nothing else
  no-symbol  `heaprec run --no-symbolize`: the library, and heaprec run collecting the profiles
  run        `heaprec run` as a user runs it: the profiles also symbolized and rewritten, on a
             background thread while the make runs and at its end
  run-tmpfs  the same with the profiles written to a tmpfs directory (/dev/shm): what the run costs
             when creating its files costs the file system nothing (omitted without /dev/shm)
and, for each VAR=VALUE given, the library alone with that setting too (HEAPREC_NO_HEAP_RECORD=1:
what the heap records cost), and for each run:VAR=VALUE, `heaprec run` with it in its environment,
in the same rounds. Each make's tree is deleted before the next make, unless --keep: then all are
kept until the end (on ext4 without a journal a file created in the minutes after a deletion pays
for each inode freed in its group: end_of_run.py).
Prints, per configuration, the medians of wall time and of CPU time (user + system of everything
the command ran, heaprec run's own threads included) and the medians (min-max) of each round's
ratio to the round's plain make. HEAPREC is a heaprec binary; its library is ../lib/libheaprec.so.
"""
import os
import shutil
import statistics
import sys
import tempfile

from harness import BenchError, clean_env, rotated, run, write_make_clib

keep = "--keep" in sys.argv[1:]
args = [a for a in sys.argv[1:] if a != "--keep"]
heaprec = os.path.abspath(args[0])
rounds = int(args[1]) if len(args) > 1 else 4
library = os.path.join(os.path.dirname(os.path.dirname(heaprec)), "lib", "libheaprec.so")
# (name, heaprec run's flags or None for the library alone, the extra environment: the library's
# settings, or heaprec run's); the plain make has neither.
CONFIGS = [("plain", None, None), ("preload", None, {})]
CONFIGS += [(a, None, dict([a.split("=", 1)])) for a in args[2:] if not a.startswith("run:")]
CONFIGS += [("no-symbol", ["--no-symbolize"], None), ("run", [], None)]
CONFIGS += [(a, [], dict([a[4:].split("=", 1)])) for a in args[2:] if a.startswith("run:")]
TMPFS = "/dev/shm"
if os.path.isdir(TMPFS) and os.access(TMPFS, os.W_OK):
    CONFIGS.append(("run-tmpfs", [], None))


def one(name, flags, settings, root):
    """(wall seconds, CPU seconds) of one make."""
    src = os.path.join(root, "src")
    out = os.path.join(root, "profiles")
    os.makedirs(src)
    os.makedirs(out)
    if name == "run-tmpfs":
        out = tempfile.mkdtemp(dir=TMPFS, prefix="heaprec-make-split-")
    write_make_clib(src)
    cmd = ["make", "-s", "-j2"]
    template = os.path.join(out, "p.%e.%p.pb.gz")
    env = clean_env()
    if flags is None and settings is not None:
        # What cli/run_environment.cc sets for a native program heaprec run symbolizes.
        manifest = os.path.join(out, "manifest")
        open(manifest, "w").close()
        env.update(LD_PRELOAD=library, HEAPREC_OUTPUT=template, HEAPREC_UNCOMPRESSED="1",
                   HEAPREC_MANIFEST=manifest, **settings)
    elif flags is not None:
        cmd = [heaprec, "run", *flags, "-o", template, "--", *cmd]
        env.update(settings or {})
    result = run(cmd, env=env, cwd=src, timeout=1800)
    if out.startswith(TMPFS):
        shutil.rmtree(out, ignore_errors=True)
    if not result.ok:
        raise BenchError(f"{' '.join(cmd)}: {result.why()}")
    return result.wall, result.cpu


results = {name: [] for name, _, _ in CONFIGS}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(rounds):
        order = rotated(CONFIGS, r)
        got = {}
        for name, flags, settings in order:
            root = os.path.join(tmp, f"{r}-{len(got)}")
            got[name] = one(name, flags, settings, root)
            if not keep:
                shutil.rmtree(root, ignore_errors=True)
        for name in results:
            results[name].append(got[name])
        print(f"round {r + 1}: " + "  ".join(
            f"{n} {got[n][0]:.2f} s wall {got[n][1]:.2f} s CPU" for n in results), flush=True)


def summary(values):
    return f"{statistics.median(values):.3f}x ({min(values):.2f}-{max(values):.2f})"


plain = results["plain"]
for name, measured in results.items():
    walls = [w for w, _ in measured]
    cpus = [c for _, c in measured]
    wall_ratios = [w / p[0] for (w, _), p in zip(measured, plain)]
    cpu_ratios = [c / p[1] for (_, c), p in zip(measured, plain)]
    print(f"{name:24} wall {statistics.median(walls):.2f} s {summary(wall_ratios)}   "
          f"CPU {statistics.median(cpus):.2f} s {summary(cpu_ratios)}")
