#!/usr/bin/env python3
"""The fixed cost of a profiled process: the CPU time one short program takes under heaprec's
library, with the settings `heaprec run` gives it, over the same program plain (docs/benchmarks.md,
"Many processes"):

  python3 bench/process_cost.py BUILD_DIR [OTHER_LIBHEAPREC] ROUNDS -- PROGRAM [ARGS...]

Each round runs, in an order shuffled by a fixed seed: the program plain, under the do-nothing
interposer (the floor, BUILD_DIR/lib/libheaprec_floor.so), under BUILD_DIR/lib/libheaprec.so, and
under OTHER_LIBHEAPREC when given (another build's, to compare in the same rounds). CPU time is
user + system of the process and everything it waited for (os.wait4), so a compiler driver counts
its cc1 and as. Prints each configuration's mean and its standard error, and the mean over plain;
with OTHER_LIBHEAPREC, also the two libraries' difference paired by round. HEAPREC_* variables
of the caller's environment apply to both libraries (HEAPREC_SAMPLE_INTERVAL=1: exact mode).
"""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interleave import cpu_ms_by_config  # noqa: E402

args = sys.argv[1:]
split = args.index("--")
options, program = args[:split], args[split + 1:]
build, rounds = options[0], int(options[-1])
other = options[1] if len(options) == 3 else None

base = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "HEAPREC_"))}
with tempfile.TemporaryDirectory() as out:
    manifest = os.path.join(out, "manifest")
    open(manifest, "w").close()
    # What `heaprec run` sets for a native program it symbolizes (cli/run_environment.cc).
    # The caller's own HEAPREC_* settings (HEAPREC_SAMPLE_INTERVAL=1: exact mode) apply to both
    # libraries.
    run = {k: v for k, v in os.environ.items() if k.startswith("HEAPREC_")}
    run.update({"HEAPREC_OUTPUT": os.path.join(out, "p.%p.pb.gz"), "HEAPREC_UNCOMPRESSED": "1",
                "HEAPREC_MANIFEST": manifest})
    configs = {"plain": {}, "floor": {"LD_PRELOAD": f"{build}/lib/libheaprec_floor.so"},
               "heaprec": dict(run, LD_PRELOAD=f"{build}/lib/libheaprec.so")}
    if other:
        configs["other"] = dict(run, LD_PRELOAD=other)

    def clear_profiles(r):
        if r % 20 == 19:  # the profiles, a few KB each
            for f in os.listdir(out):
                if f != "manifest":
                    os.unlink(os.path.join(out, f))
            open(manifest, "w").close()

    cpu = cpu_ms_by_config(program, base, configs, rounds, clear_profiles)

plain = statistics.mean(cpu["plain"])
for name, values in cpu.items():
    mean = statistics.mean(values)
    error = statistics.stdev(values) / len(values) ** 0.5
    print(f"{name:8} {mean:8.3f} ms ±{error:.3f}   +{mean - plain:.3f} ms over plain")
if other:
    # Paired by round: the machine's drift between rounds cancels out of each difference.
    differences = [a - b for a, b in zip(cpu["heaprec"], cpu["other"])]
    mean = statistics.mean(differences)
    error = statistics.stdev(differences) / len(differences) ** 0.5
    print(f"heaprec - other, paired by round: {mean:+.3f} ms ±{error:.3f}")
