"""Running one measured command: wall time, peak RSS, timeout, clean environment, temp dirs."""
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

# Variables that would change which allocator or profiler a run gets: removed from every run's
# environment, then set again by the configuration that wants them.
_POLLUTERS = ("LD_PRELOAD", "MALLOC_CONF", "PYTHONMALLOC", "MALLOC_ARENA_MAX", "HEAPTRACK_")


class BenchError(Exception):
    """A benchmark step that cannot go on (a missing tool, a workload that does not build)."""


@dataclass
class Result:
    wall: float                 # seconds, fork to reap
    maxrss_kib: int             # ru_maxrss from wait4: the largest process of the tree (see notes)
    rc: int                     # exit code, or -signal
    timed_out: bool = False
    err_tail: str = ""          # last line of stderr, for error messages
    cpu: float = 0.0            # user + system seconds of the child and every descendant reaped

    @property
    def ok(self):
        return self.rc == 0 and not self.timed_out

    def why(self):
        if self.timed_out:
            return "timed out"
        return f"exit {self.rc}: {self.err_tail[:80]}" if self.err_tail else f"exit {self.rc}"


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if not any(k.startswith(p) for p in _POLLUTERS) and not k.startswith("HEAPREC_")}
    env.update(extra or {})
    return env


def run(cmd, env=None, cwd=None, timeout=600.0, stdout=subprocess.DEVNULL, stderr_path=None,
        mem_cap=None):
    """Runs cmd in its own process group; kills the whole group at the timeout (or on ^C).
    mem_cap: an address-space limit (bytes) for every process of the run, so a tool that runs away
    (heaptrack_interpret reached 18 GiB on the compiler) fails alone instead of the shared machine.

    wait4 blocks (no polling), so the wall time is fork to reap; its rusage covers the child and
    every descendant it waited for, and ru_maxrss is then the largest single process's peak."""
    err = open(stderr_path or os.devnull, "wb")
    try:
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (mem_cap, mem_cap))

        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, env=env if env is not None else clean_env(), cwd=cwd,
                                    stdin=subprocess.DEVNULL, stdout=stdout, stderr=err,
                                    start_new_session=True, preexec_fn=limit if mem_cap else None)
        except OSError as e:
            raise BenchError(f"cannot start {cmd[0]}: {e}") from e
        fired = threading.Event()

        def kill():
            fired.set()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # ^C: take the whole group down, reap it, and pass the signal on
            kill()
            os.waitpid(proc.pid, 0)
            proc.returncode = -9
            raise
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        try:  # nothing of the group may outlive the measurement (heaptrack's interpreter, ...)
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    finally:
        err.close()
    tail = ""
    if stderr_path and os.path.exists(stderr_path):
        with open(stderr_path, "rb") as f:
            lines = [ln for ln in f.read()[-4096:].decode(errors="replace").splitlines() if ln.strip()]
        tail = lines[-1].strip() if lines else ""
    return Result(wall, usage.ru_maxrss, proc.returncode, fired.is_set(), tail,
                  usage.ru_utime + usage.ru_stime)


def rotated(configs, round_index):
    """The configurations in round `round_index`'s order: rotated by one place a round, so that
    over len(configs) rounds each runs in each place once and none always follows the same one
    (on this VM what ran just before moves a run by several percent: the files it deleted, the
    page cache it left)."""
    k = round_index % len(configs)
    return list(configs[k:]) + list(configs[:k])


def write_make_clib(directory, units=100):
    """Writes bench/workloads/make_clib.py's C library of `units` files and its Makefile into
    `directory` (made if missing): `make -s -j2` there runs about 3 processes per file."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads", "make_clib.py")
    subprocess.run(["python3", script, directory, str(units)], check=True)


def capture(cmd, timeout=300.0, env=None):
    """Runs a helper command (not measured) and returns its stdout; raises BenchError on failure."""
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, timeout=timeout, text=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError(f"{' '.join(map(str, cmd[:3]))}...: {e}") from e
    if p.returncode != 0:
        raise BenchError(f"{' '.join(map(str, cmd[:3]))}... exit {p.returncode}: "
                         f"{p.stderr.strip().splitlines()[-1:] or ''}")
    return p.stdout


def comment_fields(heaprec, profile):
    """The NAME=VALUE comment fields of a profile, as a dict of strings: heaprec writes several to a
    comment, separated by spaces; `heaprec report --format json` lists the comments."""
    out = capture([heaprec, "report", profile, "--format", "json", "--top", "1"])
    fields = {}
    for comment in json.loads(out).get("comments", []):
        for f in comment.split():
            name, sep, value = f.partition("=")
            if sep and name not in fields:
                fields[name] = value
    return fields


class TempRoot:
    """One temporary directory per benchmark invocation, removed however the run ends."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="heaprec-bench-")
        self._n = 0

    def fresh(self, tag):
        self._n += 1
        d = os.path.join(self.path, f"{self._n:05d}-{tag}")
        os.mkdir(d)
        return d

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


@dataclass
class Series:
    values: list = field(default_factory=list)

    def add(self, v):
        self.values.append(v)

    def __bool__(self):
        return bool(self.values)

    def median(self):
        return statistics.median(self.values)

    def fmt(self, spec, unit="", spread=True):
        if not self.values:
            return "n/a"
        med = format(self.median(), spec) + unit
        if not spread or len(self.values) < 2:
            return med
        return f"{med} [{format(min(self.values), spec)}-{format(max(self.values), spec)}]"


def mib(nbytes):
    return nbytes / (1 << 20)


def human_bytes(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if abs(n) >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n:.0f} B"
