#!/usr/bin/env python3
"""Instructions per malloc+free pair above the floor (docs/benchmarks.md, "The hooks: instructions"):

  python3 bench/hook_instructions.py [BUILD_DIR]      # ~1 min; needs valgrind

Runs malloc_stress 1 3000000 4096 (one thread, 3,000,000 free+malloc pairs of 16 B-64 KiB, default
interval, profiles written as a user gets them: the peak profile and the final one) under callgrind
three times: glibc alone, the do-nothing interposer (bench/floor) and heaprec. Instruction counts do
not depend on the machine's load. Prints the totals and, per pair, heaprec above the floor, split
into the hooks' own instructions (the unsampled fast paths), the sampled slow path, the profiles'
writing, and the rest.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build")
stress = os.path.join(build, "bin", "malloc_stress")
PAIRS = 3_000_000
LIBS = {
    "glibc": None,
    "floor": os.path.join(build, "lib", "libheaprec_floor.so"),
    "heaprec": os.path.join(build, "lib", "libheaprec.so"),
}


def callgrind(name, library, out):
    # A fixed seed: the same sample points in every run, so the same profiles written.
    env = ["env", "-u", "LD_PRELOAD", f"HEAPREC_OUTPUT={out}/p.%p.pb.gz", "HEAPREC_SEED=1"]
    if library:
        env.append(f"LD_PRELOAD={library}")
    prefix = os.path.join(out, f"cg.{name}")
    subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes",
                    f"--callgrind-out-file={prefix}.%p", *env, stress, "1", str(PAIRS), "4096"],
                   check=True, capture_output=True)
    # The last process is malloc_stress (env execs it).
    return max(glob.glob(prefix + ".*"), key=os.path.getmtime)


def inclusive(profile):
    """function name -> inclusive instructions, from callgrind_annotate."""
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=yes", "--threshold=100", profile],
                          check=True, capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S.*)$", line)
        if m:
            costs.setdefault(m.group(2), int(m.group(1).replace(",", "")))
    return costs


def total(profile):
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", profile], check=True,
                          capture_output=True, text=True).stdout
    return int(re.search(r"([\d,]+) \([^)]*\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))


def self_cost(profile, pattern):
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", profile], check=True,
                          capture_output=True, text=True).stdout
    return sum(int(m.group(1).replace(",", "")) for m in
               re.finditer(r"^\s*([\d,]+) \([^)]*\)\s+(.*)$", text, re.M) if re.search(pattern, m.group(2)))


def matching(costs, pattern):
    """The largest inclusive cost among functions matching pattern (the outermost caller)."""
    return max((v for k, v in costs.items() if re.search(pattern, k)), default=0)


with tempfile.TemporaryDirectory() as out:
    profiles = {name: callgrind(name, lib, out) for name, lib in LIBS.items()}
    totals = {name: total(p) for name, p in profiles.items()}
    for name in LIBS:
        print(f"{name:8} {totals[name]:>15,} instructions, {totals[name] / PAIRS:7.1f} per pair")
    h = profiles["heaprec"]
    costs = inclusive(h)
    above = (totals["heaprec"] - totals["floor"]) / PAIRS
    # The exported entry points' own lines (the countdown is inlined from sampler.h).
    hooks = self_cost(h, r"(alloc/hooks\.cc|core/sampler\.h):(malloc|free|calloc|realloc)( \[.*)?$")
    slow = matching(costs, r"AllocateSlow|ReleaseSampled")
    writing = matching(costs, r"DumpFinal") + matching(costs, r"WritePeakProfile\(\)")
    floor_own = self_cost(profiles["floor"], r"floor_preload\.cc:(malloc|free)( \[.*)?$")
    print(f"heaprec above the floor: {above:.1f} per pair")
    print(f"  hooks' own instructions (fast paths): {hooks / PAIRS:.1f} per pair "
          f"(the floor's own: {floor_own / PAIRS:.1f})")
    print(f"  sampled slow paths (AllocateSlow, ReleaseSampled, inclusive): {slow / PAIRS:.1f}")
    print(f"  profile writing (final + peak profiles, inclusive): {writing / PAIRS:.1f}")
    print(f"  the rest (glibc's own work on a different heap layout, start-up): "
          f"{above - (hooks - floor_own + slow + writing) / PAIRS:.1f}")
