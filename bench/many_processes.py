"""Many processes: what `heaprec run` costs a trivial program (its fixed cost) and a real build of
a small C library (bench/workloads/make_clib.py: 100 translation units, about 300 processes:
`make -j2` starting the compiler driver, cc1 and as for each, then ar), against the same command
without heaprec, at the default interval and in exact mode. `heaprec run` here does everything a
user's does: preloading, every process's exit profile, symbolizing them all and the end-of-run
summary. Interleaved rounds, wall time (what the user waits for) and CPU time."""
import os
import shutil

from harness import Series, clean_env, rotated, run, write_make_clib

CONFIGS = [("plain", None), ("heaprec run", []), ("heaprec run, exact", ["--sample-interval", "1"])]


def cases(paths, quick):
    return [
        ("/bin/true", ["/bin/true"], None),
        ("python3 -c 'print(1)'", ["/usr/bin/python3", "-c", "print(1)"], None),
        ("make -j2 of a 100-file C library", ["make", "-s", "-j2"], 40 if quick else 100),
    ]


def measure(paths, tmp, rounds, quick, log):
    rows = {}
    for title, argv, files in cases(paths, quick):
        wall = {c: Series() for c, _ in CONFIGS}
        cpu = {c: Series() for c, _ in CONFIGS}
        ratio = {c: Series() for c, _ in CONFIGS[1:]}
        profiles = Series()
        for r in range(rounds):
            order = rotated(CONFIGS, r)
            got = {}
            for name, flags in order:
                d = tmp.fresh("many")
                src = os.path.join(d, "src")
                os.makedirs(src)
                if files:
                    write_make_clib(src, files)
                out = os.path.join(d, "profiles")
                os.makedirs(out)  # heaprec run writes into a directory, it does not make one
                cmd = argv if flags is None else [paths.heaprec, "run", *flags, "-o",
                                                  f"{out}/p.%e.%p.pb.gz", "--", *argv]
                res = run(cmd, env=clean_env({}), cwd=src, timeout=1800,
                          stderr_path=f"{d}/stderr")
                if res.ok:
                    got[name] = res.wall
                    wall[name].add(res.wall)
                    cpu[name].add(res.cpu)
                    if flags == [] and os.path.isdir(out):
                        profiles.add(len([f for f in os.listdir(out) if f.endswith(".pb.gz")]))
                else:
                    log(f"  {title} {name}: FAILED ({res.why()})")
                shutil.rmtree(d, ignore_errors=True)
            log(f"  {title:34} round {r + 1}: " +
                "  ".join(f"{n} {got.get(n, float('nan')):.3f}" for n, _ in CONFIGS) + " s")
            for name, _ in CONFIGS[1:]:
                if name in got and "plain" in got:
                    ratio[name].add(got[name] / got["plain"])
        rows[title] = (wall, cpu, ratio, profiles)
    return rows


def table(rows):
    lines = ["| command | plain | heaprec run | heaprec run, exact | default / plain | "
             "exact / plain | added by heaprec run (default) | profiles written |",
             "|---|---|---|---|---|---|---|---|"]
    for title, (wall, cpu, ratio, profiles) in rows.items():
        added = (wall["heaprec run"].median() - wall["plain"].median()) * 1000 \
            if wall["heaprec run"] and wall["plain"] else float("nan")
        lines.append(
            f"| {title} | {wall['plain'].fmt('.3f', ' s', spread=False)} | "
            f"{wall['heaprec run'].fmt('.3f', ' s', spread=False)} | "
            f"{wall['heaprec run, exact'].fmt('.3f', ' s', spread=False)} | "
            f"{ratio['heaprec run'].fmt('.2f', 'x')} | {ratio['heaprec run, exact'].fmt('.2f', 'x')}"
            f" | {added:.0f} ms | {profiles.fmt('.0f', spread=False)} |")
    return "\n".join(lines)
