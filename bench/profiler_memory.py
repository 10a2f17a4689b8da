"""Profiler memory in exact mode: what heaprec holds per live block and per unique stack.
bench/workloads/deep_stacks holds 500,000 live blocks (16-64 B) from 2,048 stacks of 43 frames
sharing their outer 20 (8 shared recursion levels, then 11 levels of two call sites) under
LD_PRELOAD=libheaprec.so HEAPREC_SAMPLE_INTERVAL=1 and calls heaprec_dump(); the profile's
profiler_bytes= comment is everything heaprec's arena has mapped then: the recorder's tables, the
peak profile's copy of the live set, the reserve kept for a final dump, and the dump's own snapshot.
The recorder's tables alone are measured in process by bench/micro/recorder_memory on the same
arena, counting each request as the arena rounds it: the live table per live block over two growth
cycles (250,000 to 1,000,000 blocks: min-max), the stack table per stack of the same shape, and a
whole recorder (allocation history included) per live block."""
import json
import os
import shutil

from harness import BenchError, Series, capture, clean_env, comment_fields, run

BLOCKS, PATHS = 500000, 2048


def _profile_comment(paths, profile, name):
    value = comment_fields(paths.heaprec, profile).get(name)
    if value is None:
        raise BenchError(f"{profile}: no {name}= comment")
    return int(value)


def measure(paths, tmp, rounds, log):
    tool = os.path.join(paths.build, "bench", "micro", "recorder_memory")
    workload = paths.bin("deep_stacks")
    for f in (tool, workload):
        if not os.path.exists(f):
            raise BenchError(f"{f} is missing: build first (bench/run.sh)")
    got = {"profiler_bytes": Series(), "live": Series(), "live_min": Series(),
           "live_max": Series(), "stack": Series(), "recorder": Series()}
    for r in range(rounds):
        d = tmp.fresh("memory")
        profile = os.path.join(d, "dump.pb.gz")
        env = clean_env({"LD_PRELOAD": paths.libheaprec, "HEAPREC_SAMPLE_INTERVAL": "1",
                         "HEAPREC_OUTPUT": f"{d}/p.%e.%p.pb.gz"})
        res = run([workload, str(BLOCKS), str(PATHS), profile], env=env, cwd=d, timeout=600,
                  stderr_path=f"{d}/stderr")
        if res.ok and os.path.exists(profile):
            got["profiler_bytes"].add(_profile_comment(paths, profile, "profiler_bytes"))
        else:
            log(f"  deep_stacks: FAILED ({res.why()})")
        m = json.loads(capture([tool, str(BLOCKS), str(PATHS)]))
        got["live"].add(m["live_table_bytes_per_block"]["at_blocks"])
        got["live_min"].add(m["live_table_bytes_per_block"]["min"])
        got["live_max"].add(m["live_table_bytes_per_block"]["max"])
        got["stack"].add(m["stack_table_bytes_per_stack"][str(PATHS)])
        got["recorder"].add(m["recorder_bytes_per_block"])
        shutil.rmtree(d, ignore_errors=True)
        total = got["profiler_bytes"].values[-1] if got["profiler_bytes"] else float("nan")
        log(f"  round {r + 1}: profiler_bytes {total:.0f} ({total / BLOCKS:.0f} B per live block), "
            f"live table {m['live_table_bytes_per_block']['at_blocks']:.1f} B per block, "
            f"stack table {m['stack_table_bytes_per_stack'][str(PATHS)]:.0f} B per stack")
    return got


def table(got):
    per_block = Series([v / BLOCKS for v in got["profiler_bytes"].values])
    return "\n".join([
        "| figure | measured: median [min-max] |",
        "|---|---|",
        f"| profiler bytes per live block (profile's profiler_bytes / {BLOCKS:,}) | "
        f"{per_block.fmt('.0f', ' B')} |",
        f"| live table, bytes per live block at {BLOCKS:,} | {got['live'].fmt('.1f', ' B')} |",
        f"| live table, bytes per live block, lowest / highest over 250,000-1,000,000 | "
        f"{got['live_min'].fmt('.1f', ' B', spread=False)} / "
        f"{got['live_max'].fmt('.1f', ' B', spread=False)} |",
        f"| profiler bytes per unique stack (stack table, {PATHS:,} stacks of 43 frames) | "
        f"{got['stack'].fmt('.0f', ' B')} |",
        f"| whole recorder (live table, stacks, allocation history) per live block | "
        f"{got['recorder'].fmt('.1f', ' B')} |",
    ])
