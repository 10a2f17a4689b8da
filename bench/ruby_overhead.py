"""heaprec's Ruby front end: what it costs an allocation-heavy Ruby program, at several sampling
rates, against plain ruby and against Ruby's own ObjectSpace.trace_object_allocations.

The program (bench/workloads/rb_pipeline.rb) runs unmodified in every configuration:

    ruby             plain `ruby rb_pipeline.rb N`, the baseline
    heaprec-EVERY    RUBYLIB=<build>/lib/ruby RUBYOPT="-rheaprec/autorun -r<probe>"
                     HEAPREC_SAMPLE_EVERY=EVERY HEAPREC_OUTPUT=<run dir>/heap.%p.pb.gz
                     (the probe, bench/workloads/rb_dump_probe.rb, only times Heaprec.dump)
    objspace         RUBYOPT=-r<bench/workloads/rb_objspace_trace.rb>: trace_object_allocations from
                     the start, ObjectSpace.dump_all at exit (the live heap with allocation sites)

All configurations run in every round, in an order that rotates from round to round; ratios are
paired (a configuration's wall time over plain ruby's in the same round). Every run's stdout must be
byte for byte the one of an unmeasured plain run made first (the workload prints a checksum).
"""
import glob
import os
import re
import shutil
import statistics
from dataclasses import dataclass, field

from harness import BenchError, Series, clean_env, human_bytes, run

WORKLOADS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")
PROGRAM = os.path.join(WORKLOADS, "rb_pipeline.rb")
PROBE = os.path.join(WORKLOADS, "rb_dump_probe.rb")
OBJSPACE = os.path.join(WORKLOADS, "rb_objspace_trace.rb")
RUBY = "ruby"


def requests(quick):
    return 8000 if quick else 20000


def title(quick):
    return f"ruby rb_pipeline.rb {requests(quick)} (JSON request pipeline)"


@dataclass
class RubyConfig:
    key: str
    label: str
    sample_every: int = 0    # heaprec's HEAPREC_SAMPLE_EVERY; 0: not heaprec

    def command(self, ruby_lib, n, d):
        env = clean_env()
        for k in ("RUBYOPT", "RUBYLIB"):  # the caller's would change what every run loads
            env.pop(k, None)
        env["HEAPREC_BENCH_LOG"] = f"{d}/probe.log"
        if self.sample_every:
            env.update(RUBYLIB=ruby_lib, RUBYOPT=f"-rheaprec/autorun -r{PROBE}",
                       HEAPREC_SAMPLE_EVERY=str(self.sample_every),
                       HEAPREC_OUTPUT=f"{d}/heap.%p.pb.gz")
        elif self.key == "objspace":
            env.update(RUBYOPT=f"-r{OBJSPACE}", HEAPREC_BENCH_OBJSPACE_DUMP=f"{d}/objspace.json")
        return [RUBY, PROGRAM, str(n)], env


CONFIGS = [
    RubyConfig("ruby", "plain ruby (baseline)"),
    RubyConfig("heaprec-1", "heaprec sample_every 1 (every object)", 1),
    RubyConfig("heaprec-100", "heaprec sample_every 100", 100),
    RubyConfig("heaprec-1000", "heaprec sample_every 1000 (default)", 1000),
    RubyConfig("heaprec-10000", "heaprec sample_every 10000", 10000),
    RubyConfig("objspace", "ObjectSpace.trace_object_allocations + dump_all at exit"),
]


@dataclass
class RubyCell:
    wall: Series = field(default_factory=Series)
    ratio: Series = field(default_factory=Series)
    ratio_no_dump: Series = field(default_factory=Series)  # (wall - exit dump) / baseline wall
    rss_kib: Series = field(default_factory=Series)
    dump_s: Series = field(default_factory=Series)
    profile_bytes: Series = field(default_factory=Series)
    profiler_bytes: Series = field(default_factory=Series)  # Heaprec.stats before the exit dump
    tracked: Series = field(default_factory=Series)
    sampled: Series = field(default_factory=Series)
    failures: list = field(default_factory=list)           # (why, wall) of runs that failed
    mismatches: list = field(default_factory=list)         # runs whose stdout differs
    same_output: int = 0


def _stderr_summary(path):
    """The line that says what went wrong: a VM [BUG], heaprec's own message, or an exception."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode(errors="replace")
    except OSError:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pattern in (r"\[BUG\]", r"heaprec: (could not|cannot)", r"\(\w+Error\)|Error:"):
        for ln in lines:
            if re.search(pattern, ln):
                return ln[:200]
    return lines[-1][:200] if lines else ""


def _probe(path):
    """The probe's last line as a dict of numbers: seconds and Heaprec.stats."""
    try:
        with open(path) as f:
            lines = [ln.split() for ln in f if ln.strip()]
    except OSError:
        return None
    if not lines:
        return None
    out = {}
    for kv in lines[-1][1:]:
        k, _, v = kv.partition("=")
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out


def _probe_dumps(path):
    """Every dump's seconds from the probe log (autorun's peak, checkpoint and exit dumps)."""
    try:
        with open(path) as f:
            lines = [ln for ln in f if ln.startswith("heaprec_dump ")]
    except OSError:
        return []
    out = []
    for ln in lines:
        for kv in ln.split()[1:]:
            k, _, v = kv.partition("=")
            if k == "seconds":
                out.append(float(v))
    return out


def check(ruby_lib):
    if not shutil.which(RUBY):
        raise BenchError("ruby is missing (apt-get install ruby ruby-dev)")
    ext = os.path.join(ruby_lib, "heaprec", "heaprec_ext.so")
    for f in (os.path.join(ruby_lib, "heaprec.rb"), os.path.join(ruby_lib, "heaprec", "autorun.rb"),
              ext):
        if not os.path.exists(f):
            raise BenchError(f"{f} is missing: build the Ruby front end first (heaprec_ruby_ext)")


def measure(ruby_lib, tmp, rounds, timeout, quick, log):
    check(ruby_lib)
    n = requests(quick)
    cells = {c.key: RubyCell() for c in CONFIGS}
    d = tmp.fresh("ruby-reference")  # unmeasured: the expected output, and a warm page cache
    argv, env = CONFIGS[0].command(ruby_lib, n, d)
    with open(f"{d}/stdout", "wb") as out:
        res = run(argv, env=env, cwd=d, timeout=timeout, stdout=out, stderr_path=f"{d}/stderr")
    with open(f"{d}/stdout", "rb") as f:
        reference = f.read()
    if not res.ok or not reference.strip():
        raise BenchError(f"plain ruby run failed: {res.why()}")
    log(f"  ruby reference output: {reference.decode(errors='replace').strip()}")
    shutil.rmtree(d, ignore_errors=True)

    for r in range(rounds):
        k = r % len(CONFIGS)
        order = CONFIGS[k:] + CONFIGS[:k]
        walls = {}
        dumps = {}
        for cfg in order:
            d = tmp.fresh(f"ruby-{cfg.key}")
            argv, env = cfg.command(ruby_lib, n, d)
            with open(f"{d}/stdout", "wb") as out:
                res = run(argv, env=env, cwd=d, timeout=timeout, stdout=out,
                          stderr_path=f"{d}/stderr")
            with open(f"{d}/stdout", "rb") as f:
                output = f.read()
            cell = cells[cfg.key]
            probe = _probe(f"{d}/probe.log")
            same = output == reference
            status = "" if res.ok else f"  FAILED ({_stderr_summary(f'{d}/stderr') or res.why()})"
            if res.ok and not same:
                status += "  OUTPUT DIFFERS"
            log(f"  {'ruby':14} {cfg.key:14} round {r + 1}: {res.wall:7.2f} s  "
                f"{res.maxrss_kib / 1024:7.1f} MiB"
                + (f"  dump {probe['seconds']:.3f} s" if probe and "seconds" in probe else "")
                + status)
            if same:
                cell.same_output += 1
            else:
                got = output.decode(errors="replace").strip().splitlines()
                cell.mismatches.append(got[-1][:160] if got else "(no output)")
            if not res.ok:
                why = _stderr_summary(f"{d}/stderr") or res.why()
                cell.failures.append((f"exit {res.rc}: {why}" if res.rc else why, res.wall))
                shutil.rmtree(d, ignore_errors=True)
                continue
            walls[cfg.key] = res.wall
            cell.wall.add(res.wall)
            cell.rss_kib.add(res.maxrss_kib)
            if probe and "seconds" in probe:
                dumps[cfg.key] = probe["seconds"]
                cell.dump_s.add(probe["seconds"])
                for name, series in (("profiler_bytes", cell.profiler_bytes),
                                     ("tracked", cell.tracked), ("sampled", cell.sampled)):
                    if name in probe:
                        series.add(probe[name])
            files = glob.glob(f"{d}/heap.*.pb.gz") + glob.glob(f"{d}/objspace.json")
            if files:
                cell.profile_bytes.add(sum(os.path.getsize(f) for f in files))
            shutil.rmtree(d, ignore_errors=True)
        base = walls.get("ruby")
        if base:
            for key, wall in walls.items():
                if key != "ruby":
                    cells[key].ratio.add(wall / base)
                    if key in dumps:
                        cells[key].ratio_no_dump.add((wall - dumps[key]) / base)
    return cells


def _range(s, spec, unit=""):
    return s.fmt(spec, unit) if s else "n/a"


def _rss(s):
    if not s:
        return "n/a"
    v = [x / 1024 for x in s.values]
    return f"{statistics.median(v):.0f} MiB" + (f" [{min(v):.0f}-{max(v):.0f}]" if len(v) > 1 else "")


def _failed(c, runs):
    if not c.failures:
        return ""
    why, _ = c.failures[0]
    walls = Series([w for _, w in c.failures])
    return (f"{len(c.failures)} of {runs} runs FAILED ({walls.fmt('.2f', ' s')} until the "
            f"failure): {why}")


def table(cells):
    """The Ruby section's own table (Markdown), one row per configuration."""
    head = ("Configuration", "Wall time", "vs plain ruby", "vs plain ruby, without the exit dump",
            "Peak RSS", "Exit dump", "Profile size", "Output = plain ruby's")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cfg in CONFIGS:
        c = cells[cfg.key]
        runs = len(c.wall.values) + len(c.failures)
        if cfg.key == "ruby":
            ratio = no_dump = "1 (baseline)"
        else:
            ratio = _range(c.ratio, ".2f", "x")
            no_dump = _range(c.ratio_no_dump, ".2f", "x")
        size = human_bytes(c.profile_bytes.median()) if c.profile_bytes else (
            "n/a" if cfg.key != "ruby" else "")
        dump = _range(c.dump_s, ".3f", " s") if cfg.key != "ruby" else ""
        wall = f"{_range(c.wall, '.2f', ' s')} (n={len(c.wall.values)})"
        failed = _failed(c, runs)
        if failed:
            wall = f"{wall}; {failed}"
        same = f"{c.same_output} of {runs}"
        if c.mismatches:
            same += f" (got: {c.mismatches[0]})"
        row = (cfg.label, wall, ratio, no_dump, _rss(c.rss_kib), dump, size, same)
        out.append("| " + " | ".join(str(x).replace("|", "\\|") for x in row) + " |")
    return "\n".join(out)


def details(cells):
    """What heaprec held at the exit dump (Heaprec.stats just before it), per sampling rate."""
    lines = []
    for cfg in CONFIGS:
        c = cells[cfg.key]
        if not cfg.sample_every or not c.sampled:
            continue
        lines.append(f"- {cfg.label}: {c.sampled.median():,.0f} objects sampled, "
                     f"{c.tracked.median():,.0f} tracked when the exit dump started, profiler "
                     f"memory {human_bytes(c.profiler_bytes.median())} (Heaprec.stats, medians)")
    return "\n".join(lines)


def rows(cells):
    """The same figures as rows of bench/run.py's one table."""
    wl = "ruby"
    out = []
    for cfg in CONFIGS:
        c = cells[cfg.key]
        runs = len(c.wall.values) + len(c.failures)
        failed = _failed(c, runs)
        if not c.wall:
            out.append((wl, cfg.label, "wall time", f"could not run: {failed}", ""))
            continue
        extra = f"; {failed}" if failed else ""
        if cfg.key == "ruby":
            out.append((wl, cfg.label, "wall time (baseline)",
                        f"{c.wall.fmt('.2f', ' s')} (n={len(c.wall.values)}){extra}", ""))
        else:
            out.append((wl, cfg.label, "wall time vs baseline",
                        f"{_range(c.ratio, '.2f', 'x')} ({c.wall.median():.2f} s, "
                        f"n={len(c.wall.values)}){extra}", ""))
            out.append((wl, cfg.label, "wall time vs baseline, without the exit dump",
                        _range(c.ratio_no_dump, ".2f", "x"), ""))
            out.append((wl, cfg.label, "exit dump time", _range(c.dump_s, ".3f", " s"), ""))
            if c.profile_bytes:
                out.append((wl, cfg.label, "profile size on disk",
                            human_bytes(c.profile_bytes.median()), ""))
        out.append((wl, cfg.label, "peak RSS", _rss(c.rss_kib), ""))
        out.append((wl, cfg.label, "stdout identical to plain ruby's",
                    f"{c.same_output} of {runs} runs"
                    + (f"; differs: {c.mismatches[0]}" if c.mismatches else ""), ""))
    return out


if __name__ == "__main__":
    raise SystemExit("run bench/run.py --only ruby")


# ---------------------------------------------------------------------------------------------
# ruby_cost: what the Ruby front end costs at the default setting, part by part (issue 28 item 7).
#
# Three workloads (bench/workloads/rb_cost.rb churn|json|erb), CPU time (user + system of the
# child, from wait4), every configuration in every round in an order that rotates, ratios paired
# with plain ruby in the same round:
#
#   ruby            plain ruby, the baseline
#   loaded          heaprec's files loaded (autorun), heaprec not started (it refuses
#                   HEAPREC_SAMPLE_EVERY=0): a control for what loading code alone does to the GC's
#                   schedule, which moves some workloads' CPU time by several percent either way
#   empty-newobj    a C hook that does nothing on NEWOBJ (bench/workloads/rb_empty_hooks.rb): the
#                   floor of any profiler built on the VM's object events
#   empty-both      the same on NEWOBJ and FREEOBJ: what the FREEOBJ event costs on its own
#   heaprec-off     heaprec as a user runs it (autorun, exit dump) with sample_every 2**62: hooks
#                   on, nothing sampled
#   heaprec         heaprec at the default, sample_every 1000: what users pay (autorun's dumps
#                   included: the exit dump, and peak and checkpoint dumps where main has them)
#   heaprec-weakmap heaprec default with the weak map liveness backend (HEAPREC_RUBY_LIVENESS,
#                   the default from Ruby 3.5): its insertions and prunes against object ids
#   heaprec-floor   heaprec default with the do-nothing interposer preloaded (libheaprec_floor.so):
#                   what routing every malloc and free through a preloaded library costs by itself
#   heaprec-native  the same with the native bytes behind the objects sampled too, as
#                   `heaprec run --ruby` runs it: libheaprec.so preloaded in runtime mode
#                   (HEAPREC_RUNTIME=ruby, the default 512 KiB interval; issue 28 item 1)
#   heaprec-before  the same with another build's library (--ruby-lib-before, e.g. main's)
#   heaprec-off-before  that build with sampling off: with heaprec-off, what its hooks cost
# ---------------------------------------------------------------------------------------------
COST_PROGRAM = os.path.join(WORKLOADS, "rb_cost.rb")
EMPTY_HOOKS = os.path.join(WORKLOADS, "rb_empty_hooks.rb")
COST_WORKLOADS = ("churn", "json", "erb")
SAMPLING_OFF = 1 << 62


def cost_scale(workload, quick):
    full = {"churn": 1200000, "json": 10, "erb": 4000}[workload]
    return max(1, full // 3) if quick else full


@dataclass
class CostConfig:
    key: str
    label: str

    def command(self, ruby_lib, before_lib, workload, n, d):
        env = clean_env()
        for k in ("RUBYOPT", "RUBYLIB"):
            env.pop(k, None)
        env["HEAPREC_BENCH_LOG"] = f"{d}/probe.log"
        if self.key.startswith("empty-"):
            env.update(RUBYLIB=ruby_lib, RUBYOPT=f"-r{EMPTY_HOOKS}",
                       HEAPREC_BENCH_EMPTY_HOOKS="newobj,freeobj" if self.key == "empty-both"
                       else "newobj")
        elif self.key == "loaded":
            env.update(RUBYLIB=ruby_lib, RUBYOPT="-rheaprec/autorun", HEAPREC_SAMPLE_EVERY="0")
        elif self.key.startswith("heaprec"):
            env.update(RUBYLIB=before_lib if self.key.endswith("-before") else ruby_lib,
                       RUBYOPT=f"-rheaprec/autorun -r{PROBE}",
                       HEAPREC_SAMPLE_EVERY=str(SAMPLING_OFF if "-off" in self.key else 1000),
                       HEAPREC_OUTPUT=f"{d}/heap.%p.pb.gz")
            lib = os.path.dirname(ruby_lib.rstrip("/"))  # lib/ruby's sibling: lib/libheaprec*.so
            if self.key == "heaprec-weakmap":
                env.update(HEAPREC_RUBY_LIVENESS="weak_map")
            if self.key == "heaprec-native":
                env.update(LD_PRELOAD=os.path.join(lib, "libheaprec.so"), HEAPREC_RUNTIME="ruby")
            elif self.key == "heaprec-floor":
                env.update(LD_PRELOAD=os.path.join(lib, "libheaprec_floor.so"))
        return [RUBY, COST_PROGRAM, workload, str(n)], env


COST_CONFIGS = [
    CostConfig("ruby", "plain ruby (baseline)"),
    CostConfig("loaded", "heaprec loaded, not started (control)"),
    CostConfig("empty-newobj", "empty C hook on NEWOBJ (the floor)"),
    CostConfig("empty-both", "empty C hooks on NEWOBJ and FREEOBJ"),
    CostConfig("heaprec-off", "heaprec, sampling off (sample_every 2**62)"),
    CostConfig("heaprec", "heaprec default (sample_every 1000)"),
    CostConfig("heaprec-weakmap", "heaprec default, weak map liveness (Ruby 3.5+'s backend)"),
    CostConfig("heaprec-floor", "heaprec default, the do-nothing interposer preloaded (floor)"),
    CostConfig("heaprec-native", "heaprec default with native bytes (heaprec run --ruby)"),
    CostConfig("heaprec-off-before", "heaprec, sampling off, the --ruby-lib-before build"),
    CostConfig("heaprec-before", "heaprec default, the --ruby-lib-before build"),
]


@dataclass
class CostCell:
    cpu: Series = field(default_factory=Series)
    ratio: Series = field(default_factory=Series)
    ratio_no_dump: Series = field(default_factory=Series)  # (cpu - all dumps' wall) / baseline cpu
    dump_s: Series = field(default_factory=Series)         # the exit dump (the last one)
    dumps_total_s: Series = field(default_factory=Series)  # every dump: peak, checkpoint, exit
    dumps: Series = field(default_factory=Series)          # how many
    sample_s: Series = field(default_factory=Series)       # Heaprec.stats sample_ns, in seconds
    record_s: Series = field(default_factory=Series)       # Heaprec.stats record_ns, in seconds
    sampled: Series = field(default_factory=Series)
    free_hook: Series = field(default_factory=Series)
    failures: list = field(default_factory=list)
    mismatches: int = 0


def cost_measure(ruby_lib, before_lib, tmp, rounds, timeout, quick, log):
    check(ruby_lib)
    configs = [c for c in COST_CONFIGS if not c.key.endswith("-before") or before_lib]
    if before_lib:
        check(before_lib)
    cells = {(w, c.key): CostCell() for w in COST_WORKLOADS for c in configs}
    reference = {}
    for w in COST_WORKLOADS:
        n = cost_scale(w, quick)
        d = tmp.fresh(f"ruby-cost-reference-{w}")
        argv, env = configs[0].command(ruby_lib, before_lib, w, n, d)
        with open(f"{d}/stdout", "wb") as out:
            res = run(argv, env=env, cwd=d, timeout=timeout, stdout=out, stderr_path=f"{d}/stderr")
        with open(f"{d}/stdout", "rb") as f:
            reference[w] = f.read()
        if not res.ok or not reference[w].strip():
            raise BenchError(f"plain ruby rb_cost.rb {w} failed: {res.why()}")
        log(f"  {w} reference output: {reference[w].decode(errors='replace').strip()}")
        shutil.rmtree(d, ignore_errors=True)
    for r in range(rounds):
        for w in COST_WORKLOADS:
            n = cost_scale(w, quick)
            k = r % len(configs)
            cpus = {}
            dumps = {}
            for cfg in configs[k:] + configs[:k]:
                d = tmp.fresh(f"ruby-cost-{w}-{cfg.key}")
                argv, env = cfg.command(ruby_lib, before_lib, w, n, d)
                with open(f"{d}/stdout", "wb") as out:
                    res = run(argv, env=env, cwd=d, timeout=timeout, stdout=out,
                              stderr_path=f"{d}/stderr")
                with open(f"{d}/stdout", "rb") as f:
                    same = f.read() == reference[w]
                cell = cells[(w, cfg.key)]
                probe = _probe(f"{d}/probe.log")
                every = _probe_dumps(f"{d}/probe.log")
                why = _stderr_summary(f"{d}/stderr") or res.why()
                status = "" if res.ok else f"  FAILED ({why})"
                if res.ok and not same:
                    status += "  OUTPUT DIFFERS"
                    cell.mismatches += 1
                log(f"  {w:6} {cfg.key:15} round {r + 1}: cpu {res.cpu:6.2f} s  wall {res.wall:6.2f} s"
                    + (f"  dumps {len(every)}, {sum(every):.3f} s" if every else "")
                    + status)
                shutil.rmtree(d, ignore_errors=True)
                if not res.ok:
                    cell.failures.append(why)
                    continue
                cpus[cfg.key] = res.cpu
                cell.cpu.add(res.cpu)
                if probe and "seconds" in probe:
                    dumps[cfg.key] = sum(every)
                    cell.dump_s.add(probe["seconds"])
                    cell.dumps_total_s.add(sum(every))
                    cell.dumps.add(len(every))
                    for name, series, scale in (("sample_ns", cell.sample_s, 1e-9),
                                                ("record_ns", cell.record_s, 1e-9),
                                                ("sampled", cell.sampled, 1),
                                                ("free_hook", cell.free_hook, 1)):
                        if name in probe:
                            series.add(probe[name] * scale)
            base = cpus.get("ruby")
            if base:
                for key, cpu in cpus.items():
                    if key != "ruby":
                        cells[(w, key)].ratio.add(cpu / base)
                        if key in dumps:
                            cells[(w, key)].ratio_no_dump.add((cpu - dumps[key]) / base)
    return configs, cells


def cost_table(configs, cells, quick):
    """One table per workload: CPU time and its ratio to plain ruby, with heaprec's parts."""
    out = []
    for w in COST_WORKLOADS:
        base = cells[(w, "ruby")].cpu
        out.append(f"**{w}** (`ruby bench/workloads/rb_cost.rb {w} {cost_scale(w, quick)}`)\n")
        head = ("Configuration", "CPU time", "vs plain ruby", "without the dumps",
                "exit dump", "all dumps (how many)", "sampling + stack capture", "recording",
                "sampled", "FREEOBJ hook")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for cfg in configs:
            c = cells[(w, cfg.key)]
            heaprec = cfg.key.startswith("heaprec")
            cpu = f"{_range(c.cpu, '.2f', ' s')} (n={len(c.cpu.values)})"
            if c.failures:
                cpu += f"; {len(c.failures)} FAILED: {c.failures[0]}"
            if c.mismatches:
                cpu += f"; {c.mismatches} with other output"
            ratio = "1 (baseline)" if cfg.key == "ruby" else _range(c.ratio, ".3f", "x")
            no_dump = _range(c.ratio_no_dump, ".3f", "x") if heaprec else ""
            dump = _range(c.dump_s, ".3f", " s") if heaprec else ""
            alldumps = (f"{_range(c.dumps_total_s, '.3f', ' s')} ({_range(c.dumps, '.0f')})"
                        if c.dumps else ("n/a" if heaprec else ""))
            share = lambda s: (f"{s.median() * 1000:.1f} ms ({s.median() / base.median() * 100:.2f}%)"
                               if s and base else ("n/a" if heaprec else ""))
            sampled = f"{c.sampled.median():,.0f}" if c.sampled else ("n/a" if heaprec else "")
            hook = (("on" if c.free_hook.median() else "off") if c.free_hook else
                    ("on (always)" if cfg.key == "empty-both" or cfg.key.endswith("-before") else
                     ("" if not heaprec else "n/a")))
            row = (cfg.label, cpu, ratio, no_dump, dump, alldumps, share(c.sample_s),
                   share(c.record_s), sampled, hook)
            out.append("| " + " | ".join(str(x).replace("|", "\\|") for x in row) + " |")
        out.append("")
    return "\n".join(out)
