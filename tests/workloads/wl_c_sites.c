/* The C allocator entry points, one site function each, with known live and cumulative bytes.
 *
 *   wl_c_sites [COUNT [CHURN]]     (defaults 100 and 1000)
 *
 * Site                      objects allocated      size each    live at exit
 * site_malloc_live          COUNT                  1000         all
 * site_calloc_live          COUNT                  calloc(4,300) = 1200    all
 * site_realloc_grow         COUNT/8 buffers, each grown by realloc 1024, 2048, ..., 8192
 *                           (realloc(NULL,1024) first): 8 allocations per buffer; final 8192 live
 * site_realloc_null         COUNT                  realloc(NULL, 1100)      all
 * site_realloc_zero         COUNT                  malloc(700), then realloc(p, 0) frees it: none
 * site_realloc_fail         COUNT                  malloc(900), then a realloc too large to
 * succeed: the old block stays the program's, so all stay live site_posix_memalign       COUNT 1024
 * (alignment 64)      all site_aligned_alloc        COUNT                  1280 (alignment 256) all
 * site_memalign             COUNT                  960 (alignment 128)      all
 * site_freed_middle         COUNT                  1000; every odd-indexed one freed: COUNT/2 live
 * site_churn                CHURN                  500, freed at once: none
 *
 * COUNT must be a multiple of 8. Prints one line with the live byte total to stdout. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_common.h"

static void** g_malloc;
static void** g_calloc;
static void** g_grow;
static void** g_rnull;
static void** g_rfail;
static void** g_pm;
static void** g_aa;
static void** g_ma;
static void** g_mid;

__attribute__((noinline)) void site_malloc_live(long count) {
  for (long i = 0; i < count; ++i) g_malloc[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_calloc_live(long count) {
  for (long i = 0; i < count; ++i) g_calloc[i] = wl_opaque(wl_check(calloc(4, 300)));
}

__attribute__((noinline)) void site_realloc_grow(long buffers) {
  for (long b = 0; b < buffers; ++b) {
    void* p = NULL;
    for (size_t size = 1024; size <= 8192; size += 1024) {
      p = wl_opaque(wl_check(realloc(p, size)));
      memset(p, 1, size);
    }
    g_grow[b] = p;
  }
}

__attribute__((noinline)) void site_realloc_null(long count) {
  for (long i = 0; i < count; ++i) g_rnull[i] = wl_opaque(wl_check(realloc(NULL, 1100)));
}

__attribute__((noinline)) void site_realloc_zero(long count) {
  for (long i = 0; i < count; ++i) {
    void* p = wl_opaque(wl_check(malloc(700)));
    void* q = realloc(p, 0); /* glibc: frees p, returns NULL */
    if (q != NULL) free(wl_opaque(q));
  }
}

__attribute__((noinline)) void site_posix_memalign(long count) {
  for (long i = 0; i < count; ++i) {
    void* p = NULL;
    if (posix_memalign(&p, 64, 1024) != 0) abort();
    if (((uintptr_t)p & 63) != 0) abort();
    g_pm[i] = wl_opaque(p);
  }
}

__attribute__((noinline)) void site_aligned_alloc(long count) {
  for (long i = 0; i < count; ++i) {
    void* p = wl_check(aligned_alloc(256, 1280));
    if (((uintptr_t)p & 255) != 0) abort();
    g_aa[i] = wl_opaque(p);
  }
}

__attribute__((noinline)) void site_memalign(long count) {
  for (long i = 0; i < count; ++i) {
    void* p = wl_check(memalign(128, 960));
    if (((uintptr_t)p & 127) != 0) abort();
    g_ma[i] = wl_opaque(p);
  }
}

__attribute__((noinline)) void site_freed_middle(long count) {
  for (long i = 0; i < count; ++i) g_mid[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_realloc_fail(long count) {
  for (long i = 0; i < count; ++i) {
    void* p = wl_opaque(wl_check(malloc(900)));
    size_t impossible = (size_t)PTRDIFF_MAX - 4096;
    void* alias = wl_opaque(p); /* realloc sees an alias, so the compiler does not call p dead */
    if (realloc(alias, impossible) != NULL) abort(); /* cannot succeed on any real machine */
    g_rfail[i] = p;
  }
}

__attribute__((noinline)) void site_churn(long churn) {
  for (long i = 0; i < churn; ++i) free(wl_opaque(wl_check(malloc(500))));
}

int main(int argc, char** argv) {
  long count = wl_arg(argc, argv, 1, 100);
  long churn = wl_arg(argc, argv, 2, 1000);
  if (count % 8 != 0) {
    fprintf(stderr, "COUNT must be a multiple of 8\n");
    return 64;
  }
  g_malloc = wl_slots(count);
  g_calloc = wl_slots(count);
  g_grow = wl_slots(count / 8);
  g_rnull = wl_slots(count);
  g_rfail = wl_slots(count);
  g_pm = wl_slots(count);
  g_aa = wl_slots(count);
  g_ma = wl_slots(count);
  g_mid = wl_slots(count);

  site_malloc_live(count);
  site_calloc_live(count);
  site_churn(churn / 2);
  site_realloc_grow(count / 8);
  site_realloc_null(count);
  site_realloc_zero(count);
  site_realloc_fail(count);
  site_posix_memalign(count);
  site_aligned_alloc(count);
  site_memalign(count);
  site_freed_middle(count);
  for (long i = 1; i < count; i += 2) free(wl_opaque(g_mid[i])); /* memory freed in the middle */
  site_churn(churn - churn / 2);

  long long live = (long long)count * (1000 + 1200 + 1024 + 1100 + 900 + 1024 + 1280 + 960) +
                   (long long)(count / 2) * 1000;
  printf("c-sites count=%ld churn=%ld live=%lld\n", count, churn, live);
  return 0;
}
