"""Symbolization speed: `heaprec symbolize` against llvm-symbolizer (Debian's llvm-14) on the same
addresses, from profiles of real runs, cold (a fresh process each time), interleaved.

llvm-symbolizer gets every location's address, turned into the ELF virtual address its binary uses
(through the profile's mapping and the binary's PT_LOAD headers), as `FILE 0xADDR` lines on stdin,
with --inlines (inlined frames expanded, as heaprec does). heaprec's time includes reading and
writing the profile, llvm-symbolizer's printing its answers: both do the whole job."""
import gzip
import os
import shutil
import subprocess
import time

from harness import BenchError, Series, clean_env, run

LLVM_SYMBOLIZER = "llvm-symbolizer-14"


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def _fields(buf, spans=False):
    """(field number, wire type, value) of one protobuf message; value is int or bytes. With
    spans, (field number, start, end) of each field's encoding instead."""
    i = 0
    while i < len(buf):
        begin = i
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 1:
            value, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            value, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise BenchError(f"unexpected protobuf wire type {wire}")
        yield (number, begin, i) if spans else (number, wire, value)


def addresses_only(path, out):
    """The profile without its samples: the same locations and mappings to symbolize, without
    the sample data heaprec symbolize would otherwise read and write again."""
    with gzip.open(path, "rb") as f:
        buf = f.read()
    kept = b"".join(buf[b:e] for n, b, e in _fields(buf, spans=True) if n != 2)
    with gzip.open(out, "wb", compresslevel=1) as f:
        f.write(kept)


def profile_addresses(path):
    """[(binary path, runtime address, mapping start, mapping file offset)] of every location."""
    with gzip.open(path, "rb") as f:
        buf = f.read()
    strings, mappings, locations = [], {}, []
    for number, _, value in _fields(buf):
        if number == 6:
            strings.append(value.decode(errors="replace"))
        elif number == 3:
            m = {n: v for n, _, v in _fields(value)}
            mappings[m.get(1, 0)] = (m.get(2, 0), m.get(4, 0), m.get(5, 0))
        elif number == 4:
            loc = {n: v for n, _, v in _fields(value) if n in (2, 3)}
            locations.append((loc.get(2, 0), loc.get(3, 0)))
    out = []
    for mapping_id, address in locations:
        if mapping_id in mappings:
            start, offset, name = mappings[mapping_id]
            out.append((strings[name], address, start, offset))
    return out


def _loads(binary, cache={}):
    if binary not in cache:
        text = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout
        segs = []
        for line in text.splitlines():
            parts = line.split()
            if parts and parts[0] == "LOAD":
                segs.append((int(parts[1], 16), int(parts[2], 16), int(parts[4], 16)))
        cache[binary] = segs
    return cache[binary]


def llvm_input(path):
    lines = []
    for binary, address, start, offset in profile_addresses(path):
        if not binary.startswith("/") or not os.path.isfile(binary) or address < start:
            continue
        file_offset = address - start + offset
        for p_offset, p_vaddr, p_filesz in _loads(binary):
            if p_offset <= file_offset < p_offset + p_filesz:
                lines.append(f'"{binary}" 0x{file_offset - p_offset + p_vaddr:x}')
                break
    return "\n".join(lines) + "\n"


def profiles(paths, tmp, log):
    """Unsymbolized exact-mode profiles of three programs: the heaprec CLI itself reading a
    profile (C++ with DWARF and deep inlining), python3 (symbol tables only) and g++'s cc1plus."""
    d = tmp.fresh("symbolize-inputs")
    w = paths.workloads_src
    runs = {
        "heaprec report (C++, -O2 -g)": [paths.heaprec, "report", "--top", "5",
                                         os.path.join(paths.build, "..", "README.md")],
        "python3 py_alloc.py 3000": ["/usr/bin/python3", f"{w}/py_alloc.py", "3000"],
        "cc1plus compile_small.cc": ["g++", "-O2", "-c", f"{w}/compile_small.cc", "-o",
                                     f"{d}/x.o"],
    }
    out = {}
    for i, (title, argv) in enumerate(runs.items()):
        sub = os.path.join(d, str(i))
        os.makedirs(sub)
        env = clean_env({"LD_PRELOAD": paths.libheaprec, "HEAPREC_SAMPLE_INTERVAL": "1",
                         "HEAPREC_OUTPUT": f"{sub}/p.%e.%p.pb.gz"})
        run(argv, env=env, cwd=sub, timeout=600)
        files = [os.path.join(sub, f) for f in os.listdir(sub)
                 if f.endswith(".pb.gz") and ".peak" not in f]
        if files:
            out[title] = max(files, key=os.path.getsize)
        else:
            log(f"  symbolize: no profile from {title}")
    return out


def measure(paths, tmp, rounds, log):
    if not shutil.which(LLVM_SYMBOLIZER):
        raise BenchError(f"{LLVM_SYMBOLIZER} is missing (apt-get install llvm-14)")
    rows = {}
    for title, profile in profiles(paths, tmp, log).items():
        text = llvm_input(profile)
        count = text.count("\n")
        bare = f"{profile}.addresses.pb.gz"
        addresses_only(profile, bare)
        heaprec, heaprec_bare, llvm = Series(), Series(), Series()
        tools = ("heaprec", "bare", "llvm")
        for r in range(rounds):
            for tool in tools[r % 3:] + tools[:r % 3]:
                t0 = time.perf_counter()
                if tool in ("heaprec", "bare"):
                    res = run([paths.heaprec, "symbolize", profile if tool == "heaprec" else bare,
                               "-o", f"{profile}.sym.pb.gz"], timeout=600)
                    if res.ok:
                        (heaprec if tool == "heaprec" else heaprec_bare).add(
                            time.perf_counter() - t0)
                else:
                    p = subprocess.run([LLVM_SYMBOLIZER, "--inlines", "--functions=linkage",
                                        "--demangle"], input=text, capture_output=True,
                                       text=True, env=clean_env({}))
                    if p.returncode == 0:
                        llvm.add(time.perf_counter() - t0)
        log(f"  symbolize {title}: {count} addresses, heaprec {heaprec.fmt('.3f', ' s')} "
            f"(addresses only {heaprec_bare.fmt('.3f', ' s')}), "
            f"llvm-symbolizer {llvm.fmt('.3f', ' s')}")
        rows[title] = (count, os.path.getsize(profile), heaprec, heaprec_bare, llvm)
    return rows


def table(rows):
    lines = ["| profile (exact mode) | addresses | heaprec symbolize, whole profile | "
             "heaprec symbolize, addresses only | llvm-symbolizer-14 --inlines | "
             "addresses only / llvm |", "|---|---|---|---|---|---|"]
    for title, (count, size, h, b, l) in rows.items():
        ratio = f"{b.median() / l.median():.2f}x" if b and l else "n/a"
        lines.append(f"| {title} | {count:,} | {h.fmt('.3f', ' s')} ({size / 1e6:.1f} MB) | "
                     f"{b.fmt('.3f', ' s')} | {l.fmt('.3f', ' s')} | {ratio} |")
    return "\n".join(lines)
