/* The peak that a slow peak write used to hide (tests/reliability/peak_test.cc).
 *
 *   rel_peak_burst DIR
 *     holds 8 MiB at site_base (which makes heaprec capture a peak and start writing it), waits
 *     until DIR/peak-write-started exists (made by rel_slow_rename.so when that write reaches its
 *     rename), bursts to 8 + 56 MiB at site_burst while the write is held, creates
 *     DIR/peak-write-go (which lets the write finish), frees the burst and exits 0.
 *
 * Exits 2 if the write never starts within 30 s. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rel_common.h"

enum { kBlock = 64 * 1024, kBaseBlocks = 128, kBurstBlocks = 896 };

static void* g_base[kBaseBlocks];
static void* g_burst[kBurstBlocks];

__attribute__((noinline)) void site_base(void) {
  for (int i = 0; i < kBaseBlocks; ++i) g_base[i] = opaque(checked(malloc(kBlock)));
}

__attribute__((noinline)) void site_burst(void) {
  for (int i = 0; i < kBurstBlocks; ++i) g_burst[i] = opaque(checked(malloc(kBlock)));
}

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  char started[4096], go[4096];
  snprintf(started, sizeof(started), "%s/peak-write-started", argv[1]);
  snprintf(go, sizeof(go), "%s/peak-write-go", argv[1]);
  site_base();
  if (!wait_for_file(started, 30)) {
    fprintf(stderr, "rel_peak_burst: no peak write started\n");
    return 2;
  }
  site_burst();
  touch_file(go);
  for (int i = 0; i < kBurstBlocks; ++i) free(g_burst[i]);
  for (int i = 0; i < kBaseBlocks; ++i) free(g_base[i]);
  printf("peak=%d\n", (kBaseBlocks + kBurstBlocks) * kBlock);
  return 0;
}
