/* Ground truth with jemalloc-exact sizes: every request is already a jemalloc size class, so
 * jemalloc's usable size equals the requested size and its profile can be compared with heaprec's
 * like for like.
 *
 *   size_classes [MIB_PER_SITE]        (default 64)
 *
 * Site                 objects                                      live at exit
 * site_sc_64           2N x 64 B, every other one freed again       N x 64 B
 * site_sc_256          the same with 256 B                          MIB_PER_SITE MiB
 * site_sc_1024         ... 1024 B                                   MIB_PER_SITE MiB
 * site_sc_4096         ... 4096 B                                   MIB_PER_SITE MiB
 * site_sc_16384        ... 16384 B                                  MIB_PER_SITE MiB
 * site_sc_mixed        alternating 64 B and 16384 B, nothing freed  about MIB_PER_SITE MiB
 *
 * where N = MIB_PER_SITE MiB / size. The mixed site tells whether a profiler unbiases each object
 * by its own size or the site by its average size. Prints one line with the live total. */
#include <stdio.h>
#include <stdlib.h>

#include "wl_common.h"

static long keep_sized(void** slots, long pairs, size_t size) {
  /* Allocate two, keep one: the freed half exercises the free path between live objects. */
  for (long i = 0; i < pairs; ++i) {
    void* gone = wl_opaque(wl_check(malloc(size)));
    slots[i] = wl_opaque(wl_check(malloc(size)));
    free(gone);
  }
  return pairs * (long)size;
}

__attribute__((noinline)) long site_sc_64(void** s, long n) { return keep_sized(s, n, 64); }
__attribute__((noinline)) long site_sc_256(void** s, long n) { return keep_sized(s, n, 256); }
__attribute__((noinline)) long site_sc_1024(void** s, long n) { return keep_sized(s, n, 1024); }
__attribute__((noinline)) long site_sc_4096(void** s, long n) { return keep_sized(s, n, 4096); }
__attribute__((noinline)) long site_sc_16384(void** s, long n) { return keep_sized(s, n, 16384); }

__attribute__((noinline)) long site_sc_mixed(void** s, long pairs) {
  for (long i = 0; i < pairs; ++i) {
    s[2 * i] = wl_opaque(wl_check(malloc(64)));
    s[2 * i + 1] = wl_opaque(wl_check(malloc(16384)));
  }
  return pairs * (64 + 16384);
}

int main(int argc, char** argv) {
  long mib = wl_arg(argc, argv, 1, 64);
  long bytes = mib << 20;
  static const size_t sizes[] = {64, 256, 1024, 4096, 16384};
  long (*const sites[])(void**, long) = {site_sc_64, site_sc_256, site_sc_1024, site_sc_4096,
                                         site_sc_16384};
  long live = 0;
  for (int k = 0; k < 5; ++k) {
    long n = bytes / (long)sizes[k];
    live += sites[k](wl_slots(n), n);
  }
  long pairs = bytes / (64 + 16384);
  live += site_sc_mixed(wl_slots(2 * pairs), pairs);
  printf("size-classes mib_per_site=%ld live=%ld\n", mib, live);
  return 0;
}
