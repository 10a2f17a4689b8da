"""Exact mode against heaptrack: CPU time of each workload under glibc alone, under heaprec at
interval 1 (every allocation recorded with its stack) and under heaptrack 1.4 (which also records
every allocation), in interleaved rounds whose order rotates. Ratios are paired within a round and
use CPU time of the whole process tree, heaptrack's interpreter process included. heaptrack does
not follow exec: for g++ it goes in as the driver's -wrapper (one heaptrack per cc1plus and as); in
py_spawn.py it sees only the parent, not the spawned workers (its figure there is a lower bound)."""
import shutil

import hot_paths
import overhead
from harness import clean_env

# Address space per process under heaptrack, as in overhead.py, except for g++, where each of
# heaptrack's processes wraps a single cc1plus or as (capped, they died of bad_alloc).
HEAPTRACK_CAP = 8 << 30
CONFIGS = ("glibc", "heaprec-exact", "heaptrack")
RATIOS = ("heaprec-exact/glibc", "heaptrack/glibc", "heaprec-exact/heaptrack")


def measure(paths, tmp, rounds, quick, log, only=None):
    if not shutil.which("heaptrack"):
        log("  exact mode: heaptrack missing (apt-get install heaptrack); skipped")
        return {}

    def command(cfg, name, argv, extra, d):
        env = clean_env(extra)
        if cfg == "heaprec-exact":
            env.update(LD_PRELOAD=paths.libheaprec, HEAPREC_SAMPLE_INTERVAL="1",
                       HEAPREC_OUTPUT=f"{d}/p.%e.%p.pb.gz")
        elif cfg == "heaptrack":
            wrapped = name == "g++"
            return overhead.heaptrack_argv(argv, d, wrapped), env, None if wrapped else HEAPTRACK_CAP
        return argv, env, None

    return hot_paths.interleave(paths, tmp, rounds, quick, log, CONFIGS, RATIOS, command, only)


def table(cells):
    return hot_paths.cpu_table(cells, ["workload", "CPU glibc", "CPU heaprec exact", "CPU heaptrack",
                                       "heaprec exact / glibc", "heaptrack / glibc",
                                       "heaprec exact / heaptrack"], CONFIGS, ".2f")
