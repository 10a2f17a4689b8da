#!/usr/bin/env python3
"""heaprec benchmarks: overhead, memory and accuracy, side by side with jemalloc's profiler,
heaptrack and Valgrind massif. Builds its workloads, prints one table, writes it as Markdown to
bench/results/<date>.md. Standard library only. `bench/run.sh` installs the tools first.

    python3 bench/run.py [--quick] [--runs N] [--only WORKLOAD[,WORKLOAD...]]

Workloads: hot_paths (CPU time under glibc, the do-nothing interposer bench/floor and heaprec:
malloc_stress, g++, python3, sqlite3, perl, node, ruby, python3 spawn; see hot_paths.py),
exact_mode (the same workloads under glibc, heaprec exact and heaptrack; exact_mode.py), many_processes (heaprec run's
fixed cost and a ~300-process make; many_processes.py), symbolize (heaprec symbolize against
llvm-symbolizer-14; symbolize_speed.py), profiler_memory (exact-mode bytes per live block and per
unique stack; profiler_memory.py); malloc_stress, g++, python3, sqlite3 (overhead); ruby (the Ruby front end: plain ruby vs
heaprec at sample_every 1/100/1000/10000 vs ObjectSpace.trace_object_allocations, see
ruby_overhead.py); ruby_cost (the Ruby front end at its default on three workloads, CPU time, part
by part: empty event hooks, hooks with sampling off, sampling, recording, the exit dump; with
--ruby-lib-before, another build's library beside it); wl_c_sites, wl_cxx_sites, size_classes (accuracy; `accuracy` selects all three);
dump_cost. Nothing fails on a number: the exit status is non-zero only when the benchmark itself
cannot run (a run that fails or prints something else than the plain run is reported in the table).
"""
import argparse
import datetime
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import accuracy  # noqa: E402
import exact_mode  # noqa: E402
import hot_paths  # noqa: E402
import many_processes  # noqa: E402
import overhead  # noqa: E402
import profiler_memory  # noqa: E402
import report  # noqa: E402
import ruby_overhead  # noqa: E402
import symbolize_speed  # noqa: E402
from harness import BenchError, TempRoot, capture  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = {"g++": "build-essential", "sqlite3": "sqlite3", "heaptrack": "heaptrack",
         "valgrind": "valgrind", "jeprof": "libjemalloc-dev", "make": "make", "perl": "perl",
         "node": "nodejs", "llvm-symbolizer-14": "llvm-14"}


class Paths:
    def __init__(self, build):
        self.build = build
        self.heaprec = os.path.join(build, "bin", "heaprec")
        self.libheaprec = os.path.join(build, "lib", "libheaprec.so")
        self.workloads_src = os.path.join(ROOT, "bench", "workloads")
        self.ruby_lib = os.path.join(build, "lib", "ruby")  # heaprec.rb, heaprec/heaprec_ext.so

    def bin(self, name):
        return os.path.join(self.build, "bin", name)

    def wl(self, name):
        return os.path.join(self.build, "tests", "e2e", "workloads", name)


def build(paths, want_dump_cost, want_ruby, log):
    if not os.path.exists(os.path.join(paths.build, "build.ninja")):
        log(f"configuring {paths.build}")
        capture(["cmake", "-S", ROOT, "-B", paths.build, "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], timeout=600)
    targets = ["heaprec", "heaprec_preload", "heaprec_floor", "malloc_stress", "size_classes",
               "heaprec_wl_c_sites", "heaprec_wl_cxx_sites", "deep_stacks", "recorder_memory"]
    known = capture(["cmake", "--build", paths.build, "--target", "help"])
    if want_dump_cost and "dump_cost" in known:
        targets.append("dump_cost")
    if want_ruby and "heaprec_ruby_ext" in known:
        targets.append("heaprec_ruby_ext")
    log(f"building {' '.join(targets)}")
    p = subprocess.run(["cmake", "--build", paths.build, "-j", str(os.cpu_count() or 2),
                        "--target", *targets], capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise BenchError("build failed:\n" + "\n".join(p.stdout.splitlines()[-15:]))


def check_tools(log, want_ruby):
    missing = [f"{t} (apt-get install {pkg})" for t, pkg in TOOLS.items() if not shutil.which(t)]
    if want_ruby and not shutil.which("ruby"):
        missing.append("ruby (apt-get install ruby ruby-dev)")
    if not os.path.exists(overhead.JEMALLOC):
        missing.append(f"{overhead.JEMALLOC} (apt-get install libjemalloc2)")
    if missing:
        raise BenchError("missing: " + ", ".join(missing) + "; bench/run.sh installs them")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smaller inputs, 3 rounds, 8 accuracy runs (a few minutes)")
    ap.add_argument("--runs", type=int, help="rounds per configuration (default 5, quick 3)")
    ap.add_argument("--slow-runs", type=int,
                    help="rounds for heaptrack and massif (default 2, quick 1)")
    ap.add_argument("--accuracy-runs", type=int, help="seeded runs per tool (default 20, quick 8)")
    ap.add_argument("--only", action="append", default=[], metavar="WORKLOAD",
                    help="run only these workloads (repeatable or comma-separated)")
    ap.add_argument("--build-dir", default=os.environ.get("HEAPREC_BUILD_DIR",
                                                          os.path.join(ROOT, "build-bench")))
    ap.add_argument("--no-build", action="store_true", help="use the build as it is")
    ap.add_argument("--ruby-lib", help="the heaprec gem's library directory for the ruby workload "
                    "(default BUILD_DIR/lib/ruby)")
    ap.add_argument("--ruby-lib-before", help="ruby_cost: another build's library directory (e.g. "
                    "main's build/lib/ruby), measured at the default beside this one")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per measured run")
    ap.add_argument("-o", "--output", help="Markdown file (default bench/results/<date>.md)")
    a = ap.parse_args()
    a.runs = a.runs or (3 if a.quick else 5)
    a.slow_runs = min(a.runs, a.slow_runs or (1 if a.quick else 2))
    a.accuracy_runs = a.accuracy_runs or (8 if a.quick else 20)
    a.only = {x.strip() for o in a.only for x in o.split(",") if x.strip()}
    if a.runs < 1 or a.accuracy_runs < 1:
        ap.error("--runs and --accuracy-runs must be at least 1")
    return a


def selected(name, only, group=None):
    return not only or name in only or (group is not None and group in only)


def notes(args, wls, paths):
    lines = [
        f"- Wall time: paired ratio against the matching baseline in the same round (heaprec, "
        f"heaptrack vs glibc; jemalloc prof vs plain jemalloc; massif vs glibc on the same reduced "
        f"input); median [min-max] over {args.runs} interleaved rounds whose order rotates "
        f"(heaptrack and massif: {args.slow_runs}, they are slow). The machine is shared: the load "
        f"average is in the header.",
        "- heaprec runs as LD_PRELOAD=build/lib/libheaprec.so with HEAPREC_SAMPLE_INTERVAL and "
        "HEAPREC_OUTPUT=<tmp>/p.%e.%p.pb.gz, unsymbolized: the process tree is the baseline's "
        "exactly, and `heaprec run -- PROGRAM ARGS` appends a stray `--` to ARGS (see the report). "
        "Symbolization is timed on its own.",
        "- Peak RSS: ru_maxrss from wait4, i.e. the largest single process of the tree (cc1plus "
        "for g++; for heaptrack possibly heaptrack_interpret, for massif valgrind itself).",
        "- Profiler's own memory: heaprec's `profiler_bytes=` comment of the main process's exit "
        "profile (its mmap arena). Peak heap for the target is approximated by glibc's peak RSS.",
        "- g++: heaprec and jemalloc follow exec through LD_PRELOAD; heaptrack does not follow "
        "exec, so it is put in front of cc1plus and as with `g++ -wrapper`; massif uses "
        "--trace-children=yes. Figures are cc1plus's.",
        "- heaptrack runs with an address-space cap of 8 GiB per process (RLIMIT_AS): in a first, "
        "uncapped run on the compiler, heaptrack_interpret grew to 18 GiB RSS and died of bad_alloc "
        "on this 24 GiB machine shared with others.",
        "- Massif is far too slow for the full inputs (about 20-50x), so it runs a reduced input "
        "against its own glibc baseline on the same reduced input.",
        "- Accuracy: per-site live bytes at exit, interval 512 KiB (jemalloc lg_prof_sample:19); "
        "truth = heaprec exact mode (checked against the sites' analytic sizes). heaprec: seeds "
        "1..N, read with `heaprec report --format json --top 0` (cum of the site_* function). "
        "jemalloc: seeds itself, read with Debian's `jeprof --text --inuse_space --cum "
        "--show_bytes`. jemalloc counts allocator-rounded usable sizes, not requested sizes: its "
        "bias is shown against both; size_classes requests exact jemalloc size classes, like for "
        "like. sd = run-to-run spread; theory = heaprec's documented n*sqrt(N(1-p)/p).",
        "- sqlite3's random() is seeded by the OS, so row contents differ run to run (same shape).",
    ]
    lines += [f"- {w.name}: {w.title}" for w in wls]
    if selected("ruby", args.only):
        lines += [
            f"- ruby: {ruby_overhead.title(args.quick)}; heaprec through RUBYLIB={paths.ruby_lib} "
            f"RUBYOPT=-rheaprec/autorun HEAPREC_SAMPLE_EVERY=N (exit dump to a temporary directory), "
            f"plus bench/workloads/rb_dump_probe.rb, which times Heaprec.dump; ObjectSpace: "
            f"bench/workloads/rb_objspace_trace.rb (trace_object_allocations_start, dump_all at exit). "
            f"Every run's stdout is compared with an unmeasured plain run's. Peak RSS: ru_maxrss.",
        ]
    return "\n".join(lines)


def main():
    args = parse_args()
    paths = Paths(os.path.abspath(args.build_dir))
    started = time.time()
    try:  # at the start: others may commit while a long run goes on
        rev = capture(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    except BenchError:
        rev = "unknown"

    def log(msg):
        print(f"[{time.time() - started:6.0f}s] {msg}", file=sys.stderr, flush=True)

    tmp = None
    try:
        want_ruby = selected("ruby", args.only)
        want_ruby_cost = selected("ruby_cost", args.only)
        if args.ruby_lib:
            paths.ruby_lib = os.path.abspath(args.ruby_lib)
        check_tools(log, want_ruby or want_ruby_cost)
        if not args.no_build:
            build(paths, selected("dump_cost", args.only), want_ruby or want_ruby_cost, log)
        for f in (paths.heaprec, paths.libheaprec):
            if not os.path.exists(f):
                raise BenchError(f"{f} is missing: build first (bench/run.sh)")
        tmp = TempRoot()
        load_before = os.getloadavg()
        rows = []
        sections = []
        for name, module, title in (
                ("hot_paths", hot_paths, "Hot paths against the floor (CPU time)"),
                ("exact_mode", exact_mode, "Exact mode against heaptrack (CPU time)"),
                ("many_processes", many_processes, "Many processes: heaprec run end to end"),
                ("symbolize", symbolize_speed, "Symbolization against llvm-symbolizer"),
                ("profiler_memory", profiler_memory, "Profiler memory in exact mode")):
            if not selected(name, args.only):
                continue
            log(f"{name}: {args.runs} rounds")
            if module is hot_paths:
                got = module.measure(paths, tmp, max(args.runs, 7), args.quick, log)
            elif module is exact_mode:
                got = module.measure(paths, tmp, min(args.runs, 3), args.quick, log)
            elif module is many_processes:
                got = module.measure(paths, tmp, args.runs, args.quick, log)
            else:
                got = module.measure(paths, tmp, args.runs, log)
            sections.append(f"## {title}\n\n{(module.__doc__ or '').strip()}\n\n"
                            f"{module.table(got)}")
        wls = [w for w in overhead.workloads(paths, args.quick) if selected(w.name, args.only)]
        cells = {}
        if wls:
            log(f"overhead: {len(wls)} workloads x {len(overhead.CONFIGS)} configurations, "
                f"{args.runs} rounds")
            cells = overhead.measure(wls, overhead.CONFIGS, paths, tmp, args.runs,
                                     args.slow_runs, args.timeout, log)
            rows += report.overhead_rows(wls, overhead.CONFIGS, cells)
        if want_ruby:
            load = os.getloadavg()
            log(f"ruby: {len(ruby_overhead.CONFIGS)} configurations, {args.runs} rounds "
                f"(load average {load[0]:.1f})")
            rcells = ruby_overhead.measure(paths.ruby_lib, tmp, args.runs, args.timeout, args.quick,
                                           log)
            load_end = os.getloadavg()
            rows += ruby_overhead.rows(rcells)
            sections.append(
                f"## Ruby front end\n\n`{ruby_overhead.title(args.quick)}`, {args.runs} rounds, "
                f"load average {load[0]:.1f} / {load_end[0]:.1f} / {load_end[2]:.1f} (at the start; "
                f"at the end, 1 and 15 min); wall time and ratios: median [min-max]; ratios paired "
                f"with plain ruby in the same round.\n\n{ruby_overhead.table(rcells)}\n\n"
                f"{ruby_overhead.details(rcells)}")
        if want_ruby_cost:
            load = os.getloadavg()
            before = os.path.abspath(args.ruby_lib_before) if args.ruby_lib_before else None
            log(f"ruby_cost: {len(ruby_overhead.COST_WORKLOADS)} workloads, {args.runs} rounds "
                f"(load average {load[0]:.1f})")
            configs, ccells = ruby_overhead.cost_measure(paths.ruby_lib, before, tmp, args.runs,
                                                         args.timeout, args.quick, log)
            load_end = os.getloadavg()
            sections.append(
                f"## Ruby front end: cost at the default, part by part\n\n"
                f"{args.runs} rounds, load average {load[0]:.1f} / {load_end[0]:.1f} / "
                f"{load_end[2]:.1f} (at the start; at the end, 1 and 15 min). CPU time (user + "
                f"system) median [min-max]; ratios paired with plain ruby in the same round. "
                f"heaprec: RUBYLIB={paths.ruby_lib}"
                + (f", before: RUBYLIB={before}" if before else "")
                + f".\n\n{ruby_overhead.cost_table(configs, ccells, args.quick)}")
        if selected("g++", args.only):
            rows += report.symbolize_rows(overhead.symbolize_times(paths, cells, tmp, 3, log))
        if selected("dump_cost", args.only):
            rows += report.dump_rows(overhead.dump_cost(paths, tmp, (100000, 1000000), log))
        progs = [p for p in accuracy.programs(paths, args.quick)
                 if selected(p.name, args.only, "accuracy")]
        if progs:
            log(f"accuracy: {len(progs)} programs x {args.accuracy_runs} runs x 2 tools")
            accuracy.measure(paths, progs, tmp, args.accuracy_runs, log)
            rows += report.accuracy_rows(progs, args.accuracy_runs)
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130
    finally:
        if tmp:
            tmp.close()
    load_after = os.getloadavg()
    now = datetime.datetime.now()
    header = (f"heaprec benchmarks, {now:%Y-%m-%d %H:%M}, commit {rev} (+ working tree), "
              f"{os.cpu_count()} CPUs, load average {load_before[0]:.1f} before / "
              f"{load_after[0]:.1f} after, {'quick' if args.quick else 'full'} run "
              f"({args.runs} rounds, {args.accuracy_runs} accuracy runs), "
              f"took {(time.time() - started) / 60:.1f} min")
    extra = "".join(f"\n{sec}\n" for sec in sections)
    text = f"{header}\n\n{report.markdown(rows)}\n{extra}\nNotes:\n{notes(args, wls, paths)}\n"
    print(text)
    out = args.output or os.path.join(ROOT, "bench", "results",
                                      f"{now:%Y-%m-%d-%H%M}{'-quick' if args.quick else ''}.md")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(f"# {header}\n\n{report.markdown(rows)}\n{extra}\n## Notes\n\n"
                f"{notes(args, wls, paths)}\n")
    print(f"written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
