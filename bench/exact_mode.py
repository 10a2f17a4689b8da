"""Exact mode against heaptrack: CPU time of each workload under glibc alone, under heaprec at
interval 1 (every allocation recorded with its stack) and under heaptrack 1.4 (which also records
every allocation), in interleaved rounds whose order rotates. Ratios are paired within a round and
use CPU time of the whole process tree, heaptrack's interpreter process included. heaptrack does
not follow exec: for g++ it goes in as the driver's -wrapper (one heaptrack per cc1plus and as); in
py_spawn.py it sees only the parent, not the spawned workers (its figure there is a lower bound)."""
import os
import shutil

import hot_paths
from harness import Series, clean_env, run

# Address space per process under heaptrack, as in overhead.py, except for g++, where each of
# heaptrack's processes wraps a single cc1plus or as (capped, they died of bad_alloc).
HEAPTRACK_CAP = 8 << 30
CONFIGS = ("glibc", "heaprec-exact", "heaptrack")
RATIOS = ("heaprec-exact/glibc", "heaptrack/glibc", "heaprec-exact/heaptrack")


def command(cfg, name, argv, extra, paths, d):
    env = clean_env(extra)
    if cfg == "heaprec-exact":
        env.update(LD_PRELOAD=paths.libheaprec, HEAPREC_SAMPLE_INTERVAL="1",
                   HEAPREC_OUTPUT=f"{d}/p.%e.%p.pb.gz")
    elif cfg == "heaptrack":
        if name == "g++":
            script = f"{d}/heaptrack-wrapper.sh"
            with open(script, "w") as f:
                f.write(f'#!/bin/sh\nexec heaptrack -o "{d}/ht.${{1##*/}}.$$" "$@"\n')
            os.chmod(script, 0o755)
            argv = [argv[0], "-wrapper", script] + argv[1:]
        else:
            argv = ["heaptrack", "-o", f"{d}/ht"] + argv
    return argv, env


def measure(paths, tmp, rounds, quick, log, only=None):
    cells = {}
    if not shutil.which("heaptrack"):
        log("  exact mode: heaptrack missing (apt-get install heaptrack); skipped")
        return cells
    for name, title, argv, extra in hot_paths.workloads(paths, quick):
        if only and name.split()[0] not in only and name not in only:
            continue
        if not shutil.which(argv[0]) and not os.path.exists(argv[0]):
            log(f"  exact mode: {argv[0]} missing, {name} skipped")
            continue
        cpu = {c: Series() for c in CONFIGS}
        ratio = {k: Series() for k in RATIOS}
        for r in range(rounds):
            order = CONFIGS[r % 3:] + CONFIGS[:r % 3]
            got = {}
            for cfg in order:
                d = tmp.fresh(f"exact-{cfg}")
                cmd, env = command(cfg, name, argv, extra, paths, d)
                res = run(cmd, env=env, cwd=d, timeout=1800, stderr_path=f"{d}/stderr",
                          mem_cap=HEAPTRACK_CAP if cfg == "heaptrack" and name != "g++" else None)
                shutil.rmtree(d, ignore_errors=True)
                if not res.ok:
                    log(f"  {name} {cfg}: FAILED ({res.why()})")
                    continue
                got[cfg] = res.cpu
                cpu[cfg].add(res.cpu)
            log(f"  {name:24} round {r + 1}: " +
                "  ".join(f"{c} {got.get(c, float('nan')):.2f}" for c in CONFIGS) + " s CPU")
            for key in ratio:
                a, b = key.split("/")
                if a in got and b in got:
                    ratio[key].add(got[a] / got[b])
        cells[name] = (title, cpu, ratio)
    return cells


def table(cells):
    lines = ["| workload | CPU glibc | CPU heaprec exact | CPU heaptrack | heaprec exact / glibc | "
             "heaptrack / glibc | heaprec exact / heaptrack |",
             "|---|---|---|---|---|---|---|"]
    for name, (title, cpu, ratio) in cells.items():
        lines.append(f"| {name} ({title}) | " +
                     " | ".join(cpu[c].fmt(".2f", " s", spread=False) for c in CONFIGS) + " | " +
                     " | ".join(ratio[k].fmt(".2f", "x") for k in RATIOS) + " |")
    return "\n".join(lines)
