# attach_test.sh's Python target: as attach_target.c's read mode, in the interpreter.
import os
import sys

before = [bytearray(4096) for _ in range(1000)]
print("ready", os.getpid(), flush=True)
sys.stdin.readline()


def after_attach_site():
    return [bytearray(65536) for _ in range(2000)]


after = after_attach_site()
del before
print("sum", sum(b[65535] + 1 for b in after), flush=True)
sys.stdin.readline()
sys.exit(7)
