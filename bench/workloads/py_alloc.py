"""Allocation-heavy Python, run with PYTHONMALLOC=malloc so every object goes through malloc.

    python3 py_alloc.py [SCALE]      (default 400000; the reduced input for slow tools uses less)

Builds a dict of SCALE records (strings, lists, tuples, nested dicts) that stays live, churns
short-lived strings and lists through it, re-keys it, and serializes part of it. Deterministic.
"""
import json
import random
import sys


def main():
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 400000
    rng = random.Random(1234)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 12)))
             for _ in range(5000)]
    table = {}
    for i in range(scale):
        key = f"{words[i % len(words)]}-{i}"
        table[key] = {"id": i, "tags": [words[(i * 7) % len(words)], words[(i * 13) % len(words)]],
                      "pos": (i * 0.5, i * 0.25), "name": key.upper()}
    churned = 0
    for i in range(scale):  # short-lived objects: the allocator's fast path
        parts = [words[(i + k) % len(words)] for k in range(8)]
        churned += len(" ".join(parts))
        if i % 3 == 0:
            del table[f"{words[i % len(words)]}-{i}"]
    rekeyed = {v["name"]: v["tags"] for v in table.values()}
    blob = json.dumps([table[k] for k in list(table)[: scale // 8]])
    back = json.loads(blob)
    print(f"py_alloc scale={scale} live={len(table)} rekeyed={len(rekeyed)} churned={churned} "
          f"json={len(blob)} back={len(back)}")


if __name__ == "__main__":
    main()
