"""Overhead, memory and profile size: every workload under every configuration, interleaved."""
import glob
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field

from harness import BenchError, Series, clean_env, comment_fields, run, capture

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
HEAPTRACK_CAP = 8 << 30  # address space per process under heaptrack (see harness.run)
JE_PROF = "prof:true,lg_prof_sample:19,prof_final:true,prof_prefix:{dir}/jeprof"


@dataclass
class Workload:
    name: str
    title: str
    full: callable           # (run_dir) -> argv
    reduced: callable        # (run_dir) -> argv, for Valgrind massif
    reduced_title: str
    main: str                # the process whose figures are reported (cc1plus for g++)
    real: bool               # a program nobody here wrote (target 1.02x) or the stress test
    env: dict = field(default_factory=dict)
    wrapper: bool = False    # g++: heaptrack does not follow exec, so it goes in as -wrapper


def workloads(paths, quick):
    w = paths.workloads_src
    stress_ops = 1500000 if quick else 6000000
    tu_types = 1 if quick else 4
    py_scale = 150000 if quick else 400000
    sql_batch = 30000 if quick else 100000

    def gxx(src, defs=()):
        return lambda d: ["g++", "-std=c++20", "-O2", *defs, "-c", src, "-o", f"{d}/out.o"]

    def sqlite(batch):
        return lambda d: ["sqlite3", "-batch", "-cmd", f".parameter set @batch {batch}", ":memory:",
                          f".read {w}/sqlite_workload.sql"]

    return [
        Workload("malloc_stress", f"malloc_stress (4 threads x {stress_ops:,} ops)",
                 lambda d: [paths.bin("malloc_stress"), "4", str(stress_ops)],
                 lambda d: [paths.bin("malloc_stress"), "4", "200000"], "4 x 200,000 ops",
                 "malloc_stress", real=False),
        Workload("g++", f"g++ -O2 -c compile_tu.cc (BENCH_TYPES={tu_types})",
                 gxx(f"{w}/compile_tu.cc", [f"-DBENCH_TYPES={tu_types}"]),
                 gxx(f"{w}/compile_small.cc"), "compile_small.cc", "cc1plus", real=True,
                 wrapper=True),
        Workload("python3", f"python3 py_alloc.py {py_scale} (PYTHONMALLOC=malloc)",
                 lambda d: ["/usr/bin/python3", f"{w}/py_alloc.py", str(py_scale)],
                 lambda d: ["/usr/bin/python3", f"{w}/py_alloc.py", "15000"], "scale 15,000",
                 "python3", real=True, env={"PYTHONMALLOC": "malloc"}),
        Workload("sqlite3", f"sqlite3 :memory:, {10 * sql_batch:,} rows, 2 indexes, queries",
                 sqlite(sql_batch), sqlite(3000), "30,000 rows", "sqlite3", real=True),
    ]


def heaptrack_argv(argv, d, wrapper):
    """argv under heaptrack, its output in d. heaptrack does not follow exec: with `wrapper` (g++),
    it goes in as the driver's -wrapper, one heaptrack per process g++ starts (cc1plus, as)."""
    if not wrapper:
        return ["heaptrack", "-o", f"{d}/ht"] + argv
    script = f"{d}/heaptrack-wrapper.sh"
    with open(script, "w") as f:
        f.write(f'#!/bin/sh\nexec heaptrack -o "{d}/ht.${{1##*/}}.$$" "$@"\n')
    os.chmod(script, 0o755)
    return [argv[0], "-wrapper", script] + argv[1:]


@dataclass
class Config:
    key: str
    label: str
    baseline: str            # key of the configuration its wall-time ratio is taken against
    slow: bool = False       # heaptrack and massif: fewer rounds
    reduced: bool = False    # runs the reduced input

    def command(self, wl, paths, d):
        argv = (wl.reduced if self.reduced else wl.full)(d)
        env = clean_env(wl.env)
        if self.key.startswith("heaprec"):
            interval = {"heaprec-512K": "524288", "heaprec-2M": "2097152", "heaprec-exact": "1"}
            env.update(LD_PRELOAD=paths.libheaprec, HEAPREC_SAMPLE_INTERVAL=interval[self.key],
                       HEAPREC_OUTPUT=f"{d}/p.%e.%p.pb.gz")
        elif self.key == "jemalloc":
            env["LD_PRELOAD"] = JEMALLOC
        elif self.key == "jemalloc-prof":
            env.update(LD_PRELOAD=JEMALLOC, MALLOC_CONF=JE_PROF.format(dir=d))
        elif self.key == "heaptrack":
            argv = heaptrack_argv(argv, d, wl.wrapper)
        elif self.key == "massif":
            argv = ["valgrind", "--tool=massif", "--trace-children=yes",
                    f"--massif-out-file={d}/massif.out.%p"] + argv
        return argv, env


CONFIGS = [
    Config("glibc", "no profiler (glibc)", "glibc"),
    Config("heaprec-512K", "heaprec 512 KiB (default)", "glibc"),
    Config("heaprec-2M", "heaprec 2 MiB", "glibc"),
    Config("heaprec-exact", "heaprec exact (interval 1)", "glibc"),
    Config("jemalloc", "jemalloc, no profiling", "jemalloc"),
    Config("jemalloc-prof", "jemalloc prof, lg_prof_sample:19", "jemalloc"),
    Config("heaptrack", "heaptrack 1.4", "glibc", slow=True),
    Config("glibc-reduced", "no profiler (glibc), reduced input", "glibc-reduced", slow=True,
           reduced=True),
    Config("massif", "valgrind massif, reduced input", "glibc-reduced", slow=True, reduced=True),
]


@dataclass
class Cell:
    """Everything measured for one (workload, configuration)."""
    wall: Series = field(default_factory=Series)
    ratio: Series = field(default_factory=Series)
    rss_kib: Series = field(default_factory=Series)
    profiler_bytes: Series = field(default_factory=Series)
    main_file: Series = field(default_factory=Series)
    all_files: Series = field(default_factory=Series)
    failures: list = field(default_factory=list)
    no_profile: list = field(default_factory=list)  # runs where the profiler wrote nothing
    kept: list = field(default_factory=list)     # main profiles kept for the symbolization timing


def _main_file(files, main):
    """The profile of the process whose figures are reported: by name, else the largest. heaprec's
    peak copies (NAME.peak.pb.gz) are not the exit profile, so they are never picked."""
    files = [f for f in files if not f.endswith(".peak.pb.gz")]
    named = [f for f in files if re.search(rf"(^|[./]){re.escape(main)}[^/]*$", f)]
    if not named:
        for f in files:  # jemalloc and massif name files by pid only: look inside for the program
            try:
                with open(f, "rb") as fh:
                    head = fh.read(1 << 20)
            except OSError:
                continue
            if f"/{main}".encode() in head or f"cmd: {main}".encode() in head:
                named.append(f)
    pool = named or files
    return max(pool, key=os.path.getsize) if pool else None


def _profile_files(d, key):
    pattern = {"heaprec": "p.*.pb.gz", "jemalloc-prof": "jeprof.*.heap", "heaptrack": "ht*.*",
               "massif": "massif.out.*"}
    for prefix, pat in pattern.items():
        if key.startswith(prefix):
            return [f for f in glob.glob(os.path.join(d, pat)) if not f.endswith(".sh")]
    return []


def profiler_bytes(paths, profile):
    value = comment_fields(paths.heaprec, profile).get("profiler_bytes")
    return None if value is None else int(value)


def measure(wls, configs, paths, tmp, rounds, slow_rounds, timeout, log):
    cells = {(w.name, c.key): Cell() for w in wls for c in configs}
    for wl in wls:
        for r in range(rounds):
            # Rotate the order each round, so no configuration always runs right after another.
            order = [c for c in configs if not c.slow or r < slow_rounds]
            k = r % len(order)
            order = order[k:] + order[:k]
            walls = {}
            for cfg in order:
                d = tmp.fresh(f"{wl.name}-{cfg.key}")
                argv, env = cfg.command(wl, paths, d)
                res = run(argv, env=env, cwd=d, timeout=timeout, stderr_path=f"{d}/stderr",
                          mem_cap=HEAPTRACK_CAP if cfg.key == "heaptrack" else None)
                cell = cells[(wl.name, cfg.key)]
                log(f"  {wl.name:14} {cfg.key:14} round {r + 1}: "
                    f"{res.wall:7.2f} s  {res.maxrss_kib / 1024:7.1f} MiB"
                    + ("" if res.ok else f"  FAILED ({res.why()})"))
                if not res.ok:
                    cell.failures.append(res.why())
                    shutil.rmtree(d, ignore_errors=True)
                    continue
                walls[cfg.key] = res.wall
                cell.wall.add(res.wall)
                cell.rss_kib.add(res.maxrss_kib)
                files = _profile_files(d, cfg.key)
                main = _main_file(files, wl.main)
                if not main and cfg.key not in ("glibc", "glibc-reduced", "jemalloc"):
                    cell.no_profile.append(res.err_tail or "no profile file")
                if main:
                    cell.main_file.add(os.path.getsize(main))
                    cell.all_files.add(sum(os.path.getsize(f) for f in files))
                    if cfg.key.startswith("heaprec"):
                        try:
                            pb = profiler_bytes(paths, main)
                            if pb is not None:
                                cell.profiler_bytes.add(pb)
                        except BenchError as e:
                            log(f"    cannot read profiler_bytes: {e}")
                        if wl.name == "g++" and cfg.key in ("heaprec-512K", "heaprec-exact") \
                                and not cell.kept:
                            keep = os.path.join(tmp.path, f"keep-{cfg.key}.pb.gz")
                            shutil.copy(main, keep)
                            cell.kept.append(keep)
                shutil.rmtree(d, ignore_errors=True)
            for key, wall in walls.items():  # paired ratios: same round, same machine state
                base = next(c.baseline for c in configs if c.key == key)
                if key != base and base in walls:
                    cells[(wl.name, key)].ratio.add(wall / walls[base])
    return cells


def symbolize_times(paths, cells, tmp, reps, log):
    """heaprec symbolize on the compiler's profiles (cc1plus), default and exact."""
    out = {}
    for key in ("heaprec-512K", "heaprec-exact"):
        kept = cells.get(("g++", key))
        if not kept or not kept.kept:
            continue
        s = Series()
        for i in range(reps):
            d = tmp.fresh("symbolize")
            res = run([paths.heaprec, "symbolize", kept.kept[0], "-o", f"{d}/s.pb.gz"], cwd=d,
                      timeout=600, stderr_path=f"{d}/stderr")
            if res.ok:
                s.add(res.wall)
                size = os.path.getsize(f"{d}/s.pb.gz")
            else:
                log(f"  symbolize {key}: FAILED ({res.why()})")
            shutil.rmtree(d, ignore_errors=True)
        if s:
            out[key] = (s, os.path.getsize(kept.kept[0]), size)
    return out


def dump_cost(paths, tmp, sizes, log):
    """bench/micro/dump_cost, owned by another engineer: used only if it is built."""
    exe = os.path.join(paths.build, "bench", "micro", "dump_cost")
    if not os.access(exe, os.X_OK):
        return None
    out = {}
    for n in sizes:
        d = tmp.fresh("dump-cost")
        env = clean_env({"LD_PRELOAD": paths.libheaprec, "HEAPREC_SAMPLE_INTERVAL": "1",
                         "HEAPREC_OUTPUT": f"{d}/p.%p.pb.gz"})
        try:
            text = capture([exe, str(n)], timeout=900, env=env)
            line = [ln for ln in text.splitlines() if ln.strip().startswith("{")][-1]
            out[n] = json.loads(line)
        except (BenchError, IndexError, ValueError) as e:
            out[n] = {"error": str(e)[:100]}
        log(f"  dump_cost {n}: {out[n]}")
        shutil.rmtree(d, ignore_errors=True)
    return out


if __name__ == "__main__":
    sys.exit("run bench/run.py")
