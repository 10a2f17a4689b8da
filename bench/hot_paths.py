"""Hot paths against the floor: CPU time of each workload under glibc alone, under the do-nothing
interposer (bench/floor, libheaprec_floor.so) and under heaprec at the default interval, in
interleaved rounds whose order rotates. Ratios are paired within a round and use CPU time (user +
system of the whole process tree), which a shared machine disturbs less than wall time."""
import os
import shutil

from harness import Series, clean_env, run


def workloads(paths, quick):
    w = paths.workloads_src
    ops = 1500000 if quick else 4000000
    return [
        ("malloc_stress 1 thread", "1 thread x {:,} ops, window 32768 blocks (about 90 MiB)"
         .format(2 * ops), [paths.bin("malloc_stress"), "1", str(2 * ops), "32768"], {}),
        ("malloc_stress 2 threads", "2 threads x {:,} ops, window 4096 blocks (16 B-64 KiB)"
         .format(ops), [paths.bin("malloc_stress"), "2", str(ops), "4096"], {}),
        ("malloc_stress 4 threads", "4 threads x {:,} ops, window 16384 blocks".format(ops // 2),
         [paths.bin("malloc_stress"), "4", str(ops // 2), "16384"], {}),
        ("g++", "g++ -O2 -c compile_tu.cc", ["g++", "-std=c++20", "-O2", "-DBENCH_TYPES=1", "-c",
                                             f"{w}/compile_tu.cc", "-o", "out.o"], {}),
        ("python3", "py_alloc.py 150000, PYTHONMALLOC=malloc",
         ["/usr/bin/python3", f"{w}/py_alloc.py", "150000"], {"PYTHONMALLOC": "malloc"}),
        ("sqlite3", "sqlite_workload.sql, 300,000 rows",
         ["sqlite3", "-batch", "-cmd", ".parameter set @batch 30000", ":memory:",
          f".read {w}/sqlite_workload.sql"], {}),
        ("perl", "pl_alloc.pl 100000", ["perl", f"{w}/pl_alloc.pl", "100000"], {}),
        ("node", "js_alloc.js 100000", ["node", f"{w}/js_alloc.js", "100000"], {}),
        ("ruby", "rb_native.rb 200000 (Ruby's malloc'd strings, arrays, hashes)",
         ["ruby", f"{w}/rb_native.rb", "200000"], {}),
        ("python3 spawn", "py_spawn.py 16 (multiprocessing, spawn, 2 workers)",
         ["/usr/bin/python3", f"{w}/py_spawn.py", "16"], {}),
    ]


CONFIGS = ("glibc", "floor", "heaprec")


def interleave(paths, tmp, rounds, quick, log, configs, ratios, command, only=None):
    """Runs every workload under each of `configs` in rotating order, `rounds` times, and pairs
    CPU times within a round into `ratios` ("a/b"). command(cfg, name, argv, extra, d) returns
    (argv, env, mem_cap) for one run in directory d. Returns {name: (title, cpu, ratio)}."""
    cells = {}
    for name, title, argv, extra in workloads(paths, quick):
        if only and name.split()[0] not in only and name not in only:
            continue
        if not shutil.which(argv[0]) and not os.path.exists(argv[0]):
            log(f"  {argv[0]} missing, {name} skipped")
            continue
        cpu = {c: Series() for c in configs}
        ratio = {k: Series() for k in ratios}
        for r in range(rounds):
            k = r % len(configs)
            got = {}
            for cfg in configs[k:] + configs[:k]:
                d = tmp.fresh(f"cpu-{cfg}")
                cmd, env, mem_cap = command(cfg, name, argv, extra, d)
                res = run(cmd, env=env, cwd=d, timeout=1800, stderr_path=f"{d}/stderr",
                          mem_cap=mem_cap)
                shutil.rmtree(d, ignore_errors=True)
                if not res.ok:
                    log(f"  {name} {cfg}: FAILED ({res.why()})")
                    continue
                got[cfg] = res.cpu
                cpu[cfg].add(res.cpu)
            log(f"  {name:24} round {r + 1}: " +
                "  ".join(f"{c} {got.get(c, float('nan')):.2f}" for c in configs) + " s CPU")
            for key in ratio:
                a, b = key.split("/")
                if a in got and b in got:
                    ratio[key].add(got[a] / got[b])
        cells[name] = (title, cpu, ratio)
    return cells


def measure(paths, tmp, rounds, quick, log, only=None):
    floor = os.path.join(paths.build, "lib", "libheaprec_floor.so")

    def command(cfg, name, argv, extra, d):
        env = clean_env(extra)
        if cfg == "floor":
            env["LD_PRELOAD"] = floor
        elif cfg == "heaprec":
            env.update(LD_PRELOAD=paths.libheaprec, HEAPREC_OUTPUT=f"{d}/p.%e.%p.pb.gz")
        return argv, env, None

    return interleave(paths, tmp, rounds, quick, log, CONFIGS,
                      ("heaprec/floor", "heaprec/glibc", "floor/glibc"), command, only)


def cpu_table(cells, headers, configs, ratio_digits):
    """The Markdown table of interleave()'s cells: one CPU column per config, then the ratios."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for name, (title, cpu, ratio) in cells.items():
        lines.append(f"| {name} ({title}) | " +
                     " | ".join(cpu[c].fmt(".2f", " s", spread=False) for c in configs) + " | " +
                     " | ".join(ratio[k].fmt(ratio_digits, "x") for k in ratio) + " |")
    return "\n".join(lines)


def table(cells):
    return cpu_table(cells, ["workload", "CPU glibc", "CPU floor", "CPU heaprec", "heaprec / floor",
                             "heaprec / glibc", "floor / glibc"], CONFIGS, ".3f")
