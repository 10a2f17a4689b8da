"""The one results table: rows of (workload, configuration, figure, measured, target)."""
import statistics

from accuracy import errors_pct, stats
from harness import human_bytes, mib

MIB = 1 << 20


def _target(met, text):
    if met is None:
        return text
    return f"{text}: {'met' if met else 'MISSED'}"


def _wall_target(wl, cfg):
    if cfg.key == "heaprec-512K":
        return (1.02, "≤ 1.02x") if wl.real else (1.10, "≤ 1.10x")
    if cfg.key == "heaprec-exact" and wl.name == "g++":
        return 3.0, "≤ 3x"
    if cfg.key == "jemalloc-prof" and wl.name == "malloc_stress":
        return None, "jemalloc's own: ~1.2-1.3x"
    if cfg.key == "heaptrack" and wl.name == "g++":
        return None, "heaptrack's usual: ~10-40x"
    return None, ""


def overhead_rows(wls, configs, cells):
    rows = []
    for wl in wls:
        base_rss = cells[(wl.name, "glibc")].rss_kib
        for cfg in configs:
            c = cells[(wl.name, cfg.key)]
            label = cfg.label + (f" ({wl.reduced_title})" if cfg.reduced else "")
            n_ok, n_fail = len(c.wall.values), len(c.failures)
            if not n_ok:
                why = c.failures[0] if c.failures else "not run"
                rows.append((wl.name, label, "wall time", f"could not run: {why}", ""))
                continue
            failed = f"; {n_fail} run(s) failed: {c.failures[0]}" if n_fail else ""
            if c.no_profile:  # the tool ran but profiled nothing: its overhead means nothing
                failed += (f"; NO PROFILE in {len(c.no_profile)} of {n_ok} runs, so this is not "
                           f"a profiled run: {c.no_profile[0][:150]}")
            if cfg.key == cfg.baseline:
                measured = f"{c.wall.fmt('.2f', ' s')} (n={n_ok}){failed}"
                rows.append((wl.name, label, "wall time (baseline)", measured, ""))
            else:
                limit, text = _wall_target(wl, cfg)
                met = c.ratio.median() <= limit if (limit and c.ratio and not c.no_profile) else None
                measured = (f"{c.ratio.fmt('.2f', 'x')} ({c.wall.median():.2f} s, n={n_ok})"
                            f"{failed}")
                rows.append((wl.name, label, "wall time vs baseline", measured,
                             _target(met, text)))
            rss = f"{_mib_series(c.rss_kib)} MiB"
            if cfg.key != "glibc" and base_rss and not cfg.reduced:
                rss += f" ({(c.rss_kib.median() - base_rss.median()) / 1024:+.0f} MiB vs glibc)"
            rows.append((wl.name, label, "peak RSS, largest process", rss, ""))
            if c.profiler_bytes:
                peak_heap = base_rss.median() * 1024 if base_rss else 0
                limit = 8 * MIB + 0.05 * peak_heap
                pb = c.profiler_bytes.median()
                target = ""
                if cfg.key == "heaprec-512K" and peak_heap:
                    target = _target(pb <= limit, f"≤ 8 MiB + 5% of peak heap = {mib(limit):.1f} MiB")
                rows.append((wl.name, label, f"profiler's own memory ({wl.main})",
                             f"{mib(pb):.1f} MiB [{mib(min(c.profiler_bytes.values)):.1f}-"
                             f"{mib(max(c.profiler_bytes.values)):.1f}]", target))
            if c.main_file:
                size = human_bytes(c.main_file.median())
                if c.all_files.median() != c.main_file.median():
                    size += f" (all processes: {human_bytes(c.all_files.median())})"
                rows.append((wl.name, label, f"profile size on disk ({wl.main})", size, ""))
    return rows


def _mib_series(s):
    vals = [v / 1024 for v in s.values]
    if len(vals) < 2:
        return f"{vals[0]:.0f}"
    return f"{statistics.median(vals):.0f} [{min(vals):.0f}-{max(vals):.0f}]"


def dump_rows(dump):
    if dump is None:
        return [("dump_cost (bench/micro)", "heaprec exact", "time to write a dump",
                 "n/a (dump_cost not built)", "")]
    rows = []
    for n, r in dump.items():
        if "error" in r:
            measured = f"failed: {r['error']}"
        else:
            measured = (f"{r['dump_seconds']:.3f} s, {human_bytes(r['file_bytes'])} "
                        f"({r['live_samples']:,} live samples)")
        rows.append(("dump_cost (bench/micro)", "heaprec exact",
                     f"time to write a dump, {n:,} live samples", measured, ""))
    return rows


def symbolize_rows(sym):
    if not sym:
        return [("g++", "heaprec symbolize", "time to symbolize cc1plus's profile",
                 "n/a (no compiler profile)", "")]
    rows = []
    for key, (s, before, after) in sym.items():
        rows.append(("g++", f"heaprec symbolize ({key} profile)",
                     "time to symbolize cc1plus's profile",
                     f"{s.fmt('.2f', ' s')} (n={len(s.values)}; {human_bytes(before)} -> "
                     f"{human_bytes(after)})", ""))
    return rows


def accuracy_rows(progs, runs_wanted):
    rows = []
    for p in progs:
        title = p.name
        truth = {s: p.exact.get(s, p.truth(s)) if p.exact else p.truth(s) for s in p.groups}
        mism = [s for s in p.groups if p.exact and p.exact.get(s, 0) != p.truth(s)]
        again = [s for s in p.groups if p.exact_again and p.exact_again.get(s, 0) != p.exact.get(s, 0)]
        if p.exact:
            ok = not mism and not again
            detail = ("every site equals the analytic truth, to the byte, in 2 runs" if ok else
                      f"differs from the analytic truth at {', '.join(mism + again)}")
            rows.append((title, "heaprec exact (interval 1)", f"{len(p.groups)} sites' live bytes",
                         detail, _target(ok, "exact")))
        for msg in p.failures[:3]:
            rows.append((title, "", "failed run", msg, ""))
        for s in p.groups:
            t = truth[s]
            for tool, results in (("heaprec", p.heaprec), ("jemalloc", p.jemalloc)):
                if not results:
                    continue
                est = [r.get(s, 0) for r in results]
                label = f"{tool} 512 KiB (n={len(est)})"
                fig = f"{s} live bytes (truth {human_bytes(t)})"
                if t == 0:
                    rows.append((title, label, fig, f"mean estimate {human_bytes(sum(est) / len(est))}",
                                 ""))
                    continue
                mean, sd = stats(errors_pct(est, t))
                se = sd / len(est) ** 0.5
                measured = f"bias {mean:+.1f}% (± {se:.1f}% s.e.), sd {sd:.1f}%"
                if tool == "heaprec":
                    measured += f" (theory: sd {100 * p.expected_sd(s) / t:.1f}%)"
                    target = _target(abs(mean) <= 3.0, "|bias| ≤ 3%")
                else:
                    usable = p.truth(s, usable=True)
                    if usable != p.truth(s):
                        umean, _ = stats(errors_pct(est, usable))
                        measured += f"; vs usable sizes {human_bytes(usable)}: bias {umean:+.1f}%"
                    target = "jemalloc counts usable sizes"
                rows.append((title, label, fig, measured, target))
        total = sum(truth.values())
        for tool, results in (("heaprec", p.heaprec), ("jemalloc", p.jemalloc)):
            if results and total:
                errs = errors_pct([sum(r.get(s, 0) for s in p.groups) for r in results], total)
                mean, sd = stats(errs)
                rows.append((title, f"{tool} 512 KiB (n={len(errs)})",
                             f"total live bytes of all sites (truth {human_bytes(total)}), per run",
                             f"error mean {mean:+.2f}%, sd {sd:.2f}%, "
                             f"range [{min(errs):+.1f}%, {max(errs):+.1f}%]", ""))
        if len(p.heaprec) < runs_wanted:
            rows.append((title, "heaprec", "runs", f"only {len(p.heaprec)} of {runs_wanted}", ""))
    return rows


def markdown(rows):
    head = ("Workload", "Configuration", "Figure", "Measured: median [min-max]", "Target")
    esc = [[str(x).replace("|", "\\|") for x in r] for r in rows]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in esc:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)
