"""Interleaved rounds of one short program under several environments, measured in CPU time:
shared by bench/process_cost.py and bench/process_settings.py."""
import os
import random
import sys


def cpu_ms_by_config(program, base_env, configs, rounds, after_round=None):
    """Runs `program` once per configuration (name -> extra environment) each round, in an order
    shuffled by a fixed seed per round, stdout and stderr to /dev/null. Returns {name: [CPU ms of
    each round]}: user + system of the process and of the children it waited for (os.wait4), so a
    compiler driver counts its cc1 and as. Exits on a run that fails. after_round(r) runs after each
    round (to delete profiles, say)."""
    cpu = {name: [] for name in configs}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for r in range(rounds):
        order = list(configs)
        random.Random(r).shuffle(order)
        for name in order:
            pid = os.fork()
            if pid == 0:
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                os.execvpe(program[0], program, dict(base_env, **configs[name]))
            _, status, usage = os.wait4(pid, 0)
            if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                sys.exit(f"{name}: {program} failed ({status})")
            cpu[name].append((usage.ru_utime + usage.ru_stime) * 1e3)
        if after_round is not None:
            after_round(r)
    os.close(devnull)
    return cpu
