"""Accuracy on ground-truth programs: per-site live-bytes estimates of heaprec and jemalloc's
profiler at the same mean interval (512 KiB), against what exact mode reports."""
import json
import math
import os
import re
import shutil
import statistics
from dataclasses import dataclass, field

from harness import BenchError, capture, clean_env, run
from overhead import JE_PROF, JEMALLOC

INTERVAL = 524288


def je_usable(size):
    """jemalloc 5 size class of a request (4 classes per doubling above 128 B, 16 B below)."""
    if size <= 8:
        return 8
    if size <= 128:
        return (size + 15) // 16 * 16
    delta = 1 << ((size - 1).bit_length() - 3)
    return (size + delta - 1) // delta * delta


# Live groups per site, [(objects, requested size)], mirroring tests/e2e/expected_sites.h and
# bench/workloads/size_classes.c.
def c_sites(count, churn):
    return {"site_malloc_live": [(count, 1000)], "site_calloc_live": [(count, 1200)],
            "site_realloc_grow": [(count // 8, 8192)], "site_realloc_null": [(count, 1100)],
            "site_realloc_zero": [], "site_realloc_fail": [(count, 900)],
            "site_posix_memalign": [(count, 1024)], "site_aligned_alloc": [(count, 1280)],
            "site_memalign": [(count, 960)], "site_freed_middle": [(count // 2, 1000)],
            "site_churn": []}


def cxx_sites(count, churn, vector_len, string_len):
    cap = 1
    while cap < vector_len:
        cap *= 2
    scap = 15
    for size in range(16, string_len + 1):  # libstdc++: max(needed, 2 x old), plus terminator
        if size > scap:
            scap = max(size, 2 * scap)
    return {"site_new_live": [(count // 2, 1000)], "site_new_array_live": [(count, 1200)],
            "site_new_aligned_live": [(count, 1024)], "site_new_nothrow_live": [(count, 1000)],
            "site_new_churn": [], "site_new_array_churn": [],
            "site_vector_growth": [(1, cap * 8)] if vector_len else [],
            "site_string_growth": [(1, scap + 1)] if string_len > 15 else []}


def size_class_sites(mib):
    b = mib << 20
    sites = {f"site_sc_{s}": [(b // s, s)] for s in (64, 256, 1024, 4096, 16384)}
    pairs = b // (64 + 16384)
    sites["site_sc_mixed"] = [(pairs, 64), (pairs, 16384)]
    return sites


@dataclass
class Program:
    name: str
    argv: list
    groups: dict                                 # site -> live groups (analytic truth)
    exact: dict = field(default_factory=dict)    # site -> bytes reported by an exact heaprec run
    exact_again: dict = field(default_factory=dict)
    heaprec: list = field(default_factory=list)  # per run: site -> estimated bytes
    jemalloc: list = field(default_factory=list)
    failures: list = field(default_factory=list)

    def truth(self, site, usable=False):
        size = je_usable if usable else (lambda s: s)
        return sum(n * size(s) for n, s in self.groups[site])

    def expected_sd(self, site):
        """heaprec's theoretical sd: sum over groups of n^2 * N * (1-p)/p, p = 1-exp(-(n+1)/T)."""
        var = 0.0
        for count, size in self.groups[site]:
            p = -math.expm1(-(size + 1) / INTERVAL)
            var += size * size * count * (1 - p) / p
        return math.sqrt(var)


def programs(paths, quick):
    count = 32768 if quick else 131072
    return [
        Program("wl_c_sites", [paths.wl("wl_c_sites"), str(count), "1000000"],
                c_sites(count, 1000000)),
        Program("wl_cxx_sites", [paths.wl("wl_cxx_sites"), str(count), "1000000", "4000000",
                                 "4000000"], cxx_sites(count, 1000000, 4000000, 4000000)),
        Program("size_classes", [paths.bin("size_classes"), "32" if quick else "128"],
                size_class_sites(32 if quick else 128)),
    ]


def _site_of(function):
    m = re.match(r"\s*(site_\w+)", function)
    return m.group(1) if m else None


def heaprec_sites(paths, prog, d, interval, seed):
    env = clean_env({"LD_PRELOAD": paths.libheaprec, "HEAPREC_SAMPLE_INTERVAL": str(interval),
                     "HEAPREC_OUTPUT": f"{d}/p.%p.pb.gz"})
    if seed is not None:
        env["HEAPREC_SEED"] = str(seed)
    res = run(prog.argv, env=env, cwd=d, timeout=300, stderr_path=f"{d}/stderr")
    if not res.ok:
        raise BenchError(f"heaprec run: {res.why()}")
    # The exit profile; heaprec also writes NAME.peak.pb.gz (the live set at the peak), not read here.
    files = [f for f in os.listdir(d) if f.endswith(".pb.gz") and not f.endswith(".peak.pb.gz")]
    if len(files) != 1:
        raise BenchError(f"heaprec run wrote {len(files)} profiles")
    capture([paths.heaprec, "symbolize", f"{d}/{files[0]}", "-o", f"{d}/sym.pb.gz"])
    report = json.loads(capture([paths.heaprec, "report", f"{d}/sym.pb.gz", "--format", "json",
                                 "--top", "0"]))
    out = {}
    for row in report["rows"]:
        site = _site_of(row["function"])
        if site in prog.groups:
            out[site] = out.get(site, 0) + row["cum"]
    return out


def jemalloc_sites(prog, d):
    env = clean_env({"LD_PRELOAD": JEMALLOC, "MALLOC_CONF": JE_PROF.format(dir=d)})
    res = run(prog.argv, env=env, cwd=d, timeout=300, stderr_path=f"{d}/stderr")
    if not res.ok:
        raise BenchError(f"jemalloc run: {res.why()}")
    heaps = [f for f in os.listdir(d) if f.endswith(".f.heap")]
    if len(heaps) != 1:
        raise BenchError(f"jemalloc wrote {len(heaps)} final heap profiles")
    # As a user would: Debian's jeprof, text, in-use bytes, cumulative (symbolized with binutils).
    text = capture(["jeprof", "--text", "--inuse_space", "--cum", "--show_bytes", prog.argv[0],
                    f"{d}/{heaps[0]}"])
    out = {}
    for line in text.splitlines():
        parts = line.split(None, 5)  # flat flat% sum% cum cum% function
        if len(parts) == 6 and parts[0].isdigit():
            site = _site_of(parts[5])
            if site in prog.groups:
                out[site] = out.get(site, 0) + int(parts[3])
    return out


def measure(paths, progs, tmp, runs, log):
    for prog in progs:
        for label, target in (("exact", prog.exact), ("exact again", prog.exact_again)):
            d = tmp.fresh(f"{prog.name}-exact")
            try:
                target.update(heaprec_sites(paths, prog, d, 1, None))
            except BenchError as e:
                prog.failures.append(f"{label}: {e}")
            shutil.rmtree(d, ignore_errors=True)
        for i in range(runs):  # interleaved: heaprec seed i, then a jemalloc run
            for tool, results in (("heaprec", prog.heaprec), ("jemalloc", prog.jemalloc)):
                d = tmp.fresh(f"{prog.name}-{tool}")
                try:
                    results.append(heaprec_sites(paths, prog, d, INTERVAL, i + 1)
                                   if tool == "heaprec" else jemalloc_sites(prog, d))
                except BenchError as e:
                    prog.failures.append(f"{tool} run {i + 1}: {e}")
                shutil.rmtree(d, ignore_errors=True)
            log(f"  accuracy {prog.name}: run {i + 1}/{runs}")
    return progs


def errors_pct(estimates, truth):
    return [100.0 * (e - truth) / truth for e in estimates]


def stats(values):
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, sd
