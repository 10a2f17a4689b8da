/* Helpers shared by the e2e workloads: keep pointers where the compiler cannot see them die, so
 * that no malloc/free pair is elided, and parse numeric arguments. */
#ifndef HEAPREC_WL_COMMON_H_
#define HEAPREC_WL_COMMON_H_

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every pointer a workload allocates passes through here: an opaque, non-inlined identity. */
__attribute__((noinline, unused)) static void* wl_opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

static inline long wl_arg(int argc, char** argv, int index, long fallback) {
  if (index >= argc) return fallback;
  char* end = NULL;
  long v = strtol(argv[index], &end, 10);
  if (end == argv[index] || *end != '\0' || v < 0) {
    fprintf(stderr, "bad numeric argument '%s'\n", argv[index]);
    exit(64);
  }
  return v;
}

/* A checked allocation result: every workload aborts loudly rather than measuring garbage. */
static inline void* wl_check(void* p) {
  if (p == NULL) {
    fprintf(stderr, "allocation failed\n");
    abort();
  }
  return p;
}

/* Arrays of kept pointers come from mmap, so they are not part of the heap profile at all. */
static inline void** wl_slots(long count) {
  size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(void*);
  void* slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (slots == MAP_FAILED) abort();
  return (void**)slots;
}

#ifdef __cplusplus
}
#endif

#endif /* HEAPREC_WL_COMMON_H_ */
