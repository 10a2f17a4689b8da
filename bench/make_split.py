#!/usr/bin/env python3
"""Where `heaprec run`'s cost on a parallel make comes from (docs/benchmarks.md, "Many processes:
where the make's overhead goes"):

  python3 bench/make_split.py HEAPREC [ROUNDS] [VAR=VALUE...]      # ~30 s a round

`make -s -j2` of the 100-file C library bench/workloads/make_clib.py writes (about 300 processes),
each round four ways (and one more for each VAR=VALUE) in a rotating order, each in a fresh copy
of the sources:
  plain      the make alone
  preload    every process under HEAPREC's library (LD_PRELOAD) with the settings `heaprec run`
             gives a native program (profiles stored uncompressed, a manifest), and nothing else
  no-symbol  `heaprec run --no-symbolize`: the library, and heaprec run collecting the profiles
  run        `heaprec run` as a user runs it: the profiles also symbolized and rewritten, on a
             background thread while the make runs and at its end
and, for each VAR=VALUE given, the library alone with that setting too (HEAPREC_NO_HEAP_RECORD=1:
what the heap records cost), in the same rounds.
Prints, per configuration, the medians of wall time and of CPU time (user + system of everything
the command ran, heaprec run's own threads included) and the medians (min-max) of each round's
ratio to the round's plain make. HEAPREC is a heaprec binary; its library is ../lib/libheaprec.so.
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
heaprec = os.path.abspath(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
variants = dict(arg.split("=", 1) for arg in sys.argv[3:])  # config name "VAR=VALUE" -> setting
library = os.path.join(os.path.dirname(os.path.dirname(heaprec)), "lib", "libheaprec.so")
CONFIGS = ["plain", "preload", *(f"{var}={value}" for var, value in variants.items()), "no-symbol",
           "run"]


def one(config, root):
    """(wall seconds, CPU seconds) of one make."""
    src = os.path.join(root, "src")
    out = os.path.join(root, "profiles")
    os.makedirs(src)
    os.makedirs(out)
    subprocess.run(["python3", os.path.join(here, "workloads", "make_clib.py"), src, "100"],
                   check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "HEAPREC_"))}
    cmd = ["make", "-s", "-j2"]
    template = os.path.join(out, "p.%e.%p.pb.gz")
    if config == "preload" or "=" in config:
        # What cli/run_environment.cc sets for a native program heaprec run symbolizes.
        manifest = os.path.join(out, "manifest")
        open(manifest, "w").close()
        env.update(LD_PRELOAD=library, HEAPREC_OUTPUT=template, HEAPREC_UNCOMPRESSED="1",
                   HEAPREC_MANIFEST=manifest)
        if "=" in config:
            var, value = config.split("=", 1)
            env[var] = value
    elif config == "no-symbol":
        cmd = [heaprec, "run", "--no-symbolize", "-o", template, "--", *cmd]
    elif config == "run":
        cmd = [heaprec, "run", "-o", template, "--", *cmd]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(cmd, cwd=src, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


results = {c: [] for c in CONFIGS}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(rounds):
        order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
        got = {}
        for config in order:
            root = os.path.join(tmp, f"{r}-{len(got)}")
            got[config] = one(config, root)
            shutil.rmtree(root, ignore_errors=True)
        for config in CONFIGS:
            results[config].append(got[config])
        print(f"round {r + 1}: " + "  ".join(
            f"{c} {got[c][0]:.2f} s wall {got[c][1]:.2f} s CPU" for c in CONFIGS), flush=True)


def summary(values):
    return f"{statistics.median(values):.3f}x ({min(values):.2f}-{max(values):.2f})"


plain = results["plain"]
for config in CONFIGS:
    walls = [w for w, _ in results[config]]
    cpus = [c for _, c in results[config]]
    wall_ratios = [w / p[0] for (w, _), p in zip(results[config], plain)]
    cpu_ratios = [c / p[1] for (_, c), p in zip(results[config], plain)]
    print(f"{config:24} wall {statistics.median(walls):.2f} s {summary(wall_ratios)}   "
          f"CPU {statistics.median(cpus):.2f} s {summary(cpu_ratios)}")
