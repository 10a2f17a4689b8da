/* A program with one leak, for `heaprec leaks`: three sites, each in a noinline function.
 *
 *   wl_leaks [ROUNDS [ROUND_MS [FREE_AT_EXIT]]]   (defaults: 30 rounds of 50 ms, about 1.5 s; 0)
 *
 *   site_leak   allocates 4 x 256 KiB every round and keeps them: +1 MiB per round, steadily.
 *   site_pool   allocates a pool of 64 x 64 KiB (4 MiB) at start, then every round frees 16 of its
 *               objects and allocates 16 replacements of the same size: always 4 MiB live.
 *   site_churn  allocates 64 x 32 KiB every round and frees them at once: nothing kept.
 *
 * The rounds are counted (not timed), so with a fixed sampler seed the same objects are sampled on
 * every run; only where the dumps fall between rounds varies. Nothing is freed at exit, so the exit
 * profile still holds the leak and the pool, unless FREE_AT_EXIT is 1: then everything is freed
 * before main returns, as destructors would (an RAII program), and the exit profile holds none of
 * it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wl_common.h"

enum {
  kLeakObjects = 4,
  kLeakSize = 256 * 1024,
  kPoolObjects = 64,
  kPoolSize = 64 * 1024,
  kPoolReplaced = 16,
  kChurnObjects = 64,
  kChurnSize = 32 * 1024,
};

static void SleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

__attribute__((noinline)) void site_leak(void** slots) {
  for (int i = 0; i < kLeakObjects; ++i) {
    slots[i] = wl_opaque(wl_check(malloc(kLeakSize)));
    memset(slots[i], 1, 64);
  }
}

__attribute__((noinline)) void* site_pool(void) { return wl_opaque(wl_check(malloc(kPoolSize))); }

__attribute__((noinline)) void site_churn(void) {
  void* batch[kChurnObjects];
  for (int i = 0; i < kChurnObjects; ++i) {
    batch[i] = wl_opaque(wl_check(malloc(kChurnSize)));
    memset(batch[i], 2, 64);
  }
  for (int i = 0; i < kChurnObjects; ++i) free(wl_opaque(batch[i]));
}

int main(int argc, char** argv) {
  long rounds = wl_arg(argc, argv, 1, 30);
  long round_ms = wl_arg(argc, argv, 2, 50);
  long free_at_exit = wl_arg(argc, argv, 3, 0);
  void** leaked = wl_slots(kLeakObjects * rounds);
  void** pool = wl_slots(kPoolObjects);
  for (int i = 0; i < kPoolObjects; ++i) pool[i] = site_pool();
  long next = 0; /* the pool's oldest object: replaced first */
  for (long r = 0; r < rounds; ++r) {
    site_leak(leaked + kLeakObjects * r);
    for (int i = 0; i < kPoolReplaced; ++i) {
      free(wl_opaque(pool[next]));
      pool[next] = site_pool();
      next = (next + 1) % kPoolObjects;
    }
    site_churn();
    SleepMs(round_ms);
  }
  printf("leaked %ld bytes in %ld rounds\n", (long)kLeakObjects * kLeakSize * rounds, rounds);
  if (free_at_exit) {
    for (long i = 0; i < kLeakObjects * rounds; ++i) free(wl_opaque(leaked[i]));
    for (int i = 0; i < kPoolObjects; ++i) free(wl_opaque(pool[i]));
  }
  return 0;
}
