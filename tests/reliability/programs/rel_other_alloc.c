/* A program running on another allocator (jemalloc or tcmalloc, preloaded): it uses the
 * allocator's extended API when there is one (jemalloc's mallocx, whose blocks the standard free
 * must release), malloc_usable_size on blocks from every entry point, and keeps blocks live at a
 * known site.
 *
 *   rel_other_alloc
 *
 * Exact-mode answer: site_other_keep holds 200 x 1500 bytes; site_other_aligned 50 x 2048
 * (alignment 256); both stay live. Prints the same lines whichever allocator is in use, except the
 * first, which says whether mallocx was found. Exits 0.
 *
 * And it frees blocks whose last word is negative (all ones) and lies just below the next block:
 * tcmalloc keeps no header between blocks of a size class. heaprec once took tcmalloc for glibc
 * (tcmalloc defines __libc_malloc too), read that word as its sample tag, and crashed the program.
 * Then it checks that no two blocks allocated again overlap. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel_common.h"

__attribute__((noinline)) void site_other_keep(void** slots) {
  for (int i = 0; i < 200; ++i) slots[i] = opaque(checked(malloc(1500)));
}

__attribute__((noinline)) void site_other_aligned(void** slots) {
  for (int i = 0; i < 50; ++i) {
    if (posix_memalign(&slots[i], 256, 2048) != 0) abort();
    opaque(slots[i]);
  }
}

static int ByAddress(const void* a, const void* b) {
  uintptr_t x = (uintptr_t) * (char*const*)a, y = (uintptr_t) * (char*const*)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  static void* kept[200];
  static void* aligned[50];
  void* (*mallocx)(size_t, int) = (void* (*)(size_t, int))dlsym(RTLD_DEFAULT, "mallocx");
  int mallocx_ok = 0;
  if (mallocx != NULL) {
    for (int i = 0; i < 1000; ++i) {
      size_t size = 1 + (size_t)i * 13;
      void* p = opaque(mallocx(size, 0));
      mallocx_ok += p != NULL && malloc_usable_size(p) >= size;
      free(p); /* a block from mallocx, released with the standard free */
    }
  }
  printf("mallocx: %s ok=%d\n", mallocx != NULL ? "found" : "absent", mallocx_ok);
  int ok = 0, total = 0;
  for (int i = 0; i < 1000; ++i) {
    size_t size = 1 + (size_t)i * 17;
    void* blocks[6];
    blocks[0] = opaque(malloc(size));
    blocks[1] = opaque(calloc(1, size));
    blocks[2] = opaque(realloc(opaque(malloc(8)), size));
    blocks[3] = opaque(aligned_alloc(64, size));
    blocks[4] = opaque(memalign(128, size));
    blocks[5] = NULL;
    if (posix_memalign(&blocks[5], 32, size) != 0) blocks[5] = NULL;
    for (int b = 0; b < 6; ++b) {
      ++total;
      ok += blocks[b] != NULL && malloc_usable_size(blocks[b]) >= size;
      if (blocks[b] != NULL) memset(blocks[b], b, size);
      free(blocks[b]);
    }
  }
  enum { kFilled = 20000, kFilledSize = 48 };
  static char* filled[kFilled];
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kFilled; ++i)
      memset(filled[i] = checked(malloc(kFilledSize)), 0xff, kFilledSize);
    for (int i = 0; i < kFilled; ++i) free(opaque(filled[i]));
  }
  for (int i = 0; i < kFilled; ++i) filled[i] = checked(malloc(kFilledSize));
  qsort(filled, kFilled, sizeof(filled[0]), ByAddress);
  int overlapping = 0;
  for (int i = 1; i < kFilled; ++i) overlapping += filled[i] < filled[i - 1] + kFilledSize;
  for (int i = 0; i < kFilled; ++i) free(filled[i]);
  printf("negative last words: %d overlapping blocks\n", overlapping);
  site_other_keep(kept);
  site_other_aligned(aligned);
  int aligned_ok = 0;
  for (int i = 0; i < 50; ++i) aligned_ok += ((uintptr_t)aligned[i] % 256) == 0;
  printf("usable_size ok=%d of %d\n", ok, total);
  printf("aligned ok=%d of 50\n", aligned_ok);
  return ok == total && overlapping == 0 && (mallocx == NULL || mallocx_ok == 1000) ? 0 : 1;
}
