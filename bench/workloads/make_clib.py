#!/usr/bin/env python3
"""Writes a small C library and its Makefile into DIR, for the many-processes benchmark: FILES
translation units of ordinary code (structs, loops, string handling, a hash table, qsort
callbacks), each compiled by `cc -O2 -g -c` (the driver, cc1 and as: three processes per file),
then archived with ar. 100 files make about 300 processes. Deterministic: the same DIR contents
on every run.

    make_clib.py DIR [FILES]
"""
import os
import sys

TEMPLATE = r'''
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct item_{n} {{
  char name[32];
  uint64_t key;
  double weight;
  struct item_{n} *next;
}};

static struct item_{n} *table_{n}[64];

static uint64_t hash_{n}(const char *s) {{
  uint64_t h = 1469598103934665603ull ^ {n};
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return h;
}}

int insert_{n}(const char *name, double weight) {{
  struct item_{n} *it = calloc(1, sizeof *it);
  if (!it) return -1;
  snprintf(it->name, sizeof it->name, "%s-%d", name, {n});
  it->key = hash_{n}(it->name);
  it->weight = weight * {n}.5;
  it->next = table_{n}[it->key % 64];
  table_{n}[it->key % 64] = it;
  return 0;
}}

static int by_weight_{n}(const void *a, const void *b) {{
  double x = (*(struct item_{n} *const *)a)->weight, y = (*(struct item_{n} *const *)b)->weight;
  return (x > y) - (x < y);
}}

size_t sorted_{n}(struct item_{n} **out, size_t cap) {{
  size_t count = 0;
  for (int i = 0; i < 64; ++i)
    for (struct item_{n} *it = table_{n}[i]; it && count < cap; it = it->next) out[count++] = it;
  qsort(out, count, sizeof *out, by_weight_{n});
  return count;
}}

char *describe_{n}(const struct item_{n} *it) {{
  size_t len = strlen(it->name) + 64;
  char *s = malloc(len);
  if (s) snprintf(s, len, "%s key=%llu weight=%.3f", it->name, (unsigned long long)it->key,
                  it->weight);
  return s;
}}

void clear_{n}(void) {{
  for (int i = 0; i < 64; ++i) {{
    while (table_{n}[i]) {{
      struct item_{n} *next = table_{n}[i]->next;
      free(table_{n}[i]);
      table_{n}[i] = next;
    }}
  }}
}}
'''


def main():
    out = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    os.makedirs(out, exist_ok=True)
    objs = []
    for n in range(files):
        with open(os.path.join(out, f"unit{n}.c"), "w") as f:
            f.write(TEMPLATE.format(n=n))
        objs.append(f"unit{n}.o")
    with open(os.path.join(out, "Makefile"), "w") as f:
        f.write("CC ?= cc\nCFLAGS ?= -O2 -g\n\n")
        f.write(f"libbench.a: {' '.join(objs)}\n\tar rcs $@ $^\n\n")
        f.write("%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n\n")
        f.write("clean:\n\trm -f *.o libbench.a\n")


if __name__ == "__main__":
    main()
