/* Threads asking glibc for their own attributes. glibc's pthread_getattr_np takes the thread's lock
 * and, while holding it, reallocs a cpu_set_t for pthread_getaffinity_np (and, on the main thread,
 * opens /proc/self/maps and reads it with getline). Those allocations are the program's: a profiler
 * that samples one of them must not ask for the same thread's attributes from inside the hook (it
 * would wait for the lock the thread already holds).
 *
 *   rel_getattr [THREADS [BATCH [CALLS]]]
 *
 * Starts THREADS threads (default 1000), BATCH at a time (default 100, all of a batch joined before
 * the next starts), each with a 256 KiB stack. Each thread first calls
 * pthread_getattr_np(pthread_self()) and pthread_attr_getstack CALLS times (default 64) before any
 * allocation of its own, checking each time that the stack reported is at least 128 KiB and
 * contains one of its local variables; then it allocates 8 blocks of 2000 + thread % 50 bytes at
 * site_getattr_alloc, frees them, and leaves. After the last batch the main thread makes the same
 * check on its own stack, CALLS times.
 *
 * Prints one deterministic line,
 *   getattr threads=N calls=N*CALLS stack_ok=N*CALLS main_ok=CALLS
 * and exits 0 when every check passed (1 otherwise, 64 for bad arguments). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel_common.h"

enum { kMaxBatch = 1000 };

static int g_calls = 64;
static atomic_long g_checked, g_stack_ok;

/* One pthread_getattr_np + pthread_attr_getstack on the calling thread: 1 when the reported stack
 * is plausible and contains `local`. */
__attribute__((noinline)) static int check_own_stack(const void* local) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* low = NULL;
  size_t size = 0;
  int ok = pthread_attr_getstack(&attr, &low, &size) == 0 && size >= 128 * 1024 &&
           (uintptr_t)local >= (uintptr_t)low && (uintptr_t)local < (uintptr_t)low + size;
  pthread_attr_destroy(&attr);
  return ok;
}

__attribute__((noinline)) static void* site_getattr_alloc(size_t size) {
  void* p = malloc(size);
  if (p == NULL) {
    fprintf(stderr, "allocation failed\n");
    abort();
  }
  memset(p, 1, size);
  return opaque(p);
}

static void* thread_main(void* arg) {
  unsigned index = (unsigned)(uintptr_t)arg;
  int local = 0;
  long ok = 0;
  for (int i = 0; i < g_calls; ++i) ok += check_own_stack(opaque(&local));
  atomic_fetch_add(&g_checked, g_calls);
  atomic_fetch_add(&g_stack_ok, ok);
  void* blocks[8];
  for (int i = 0; i < 8; ++i) blocks[i] = site_getattr_alloc(2000 + index % 50);
  for (int i = 0; i < 8; ++i) free(blocks[i]);
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1000;
  int batch = argc > 2 ? atoi(argv[2]) : 100;
  if (argc > 3) g_calls = atoi(argv[3]);
  if (threads < 1 || batch < 1 || batch > kMaxBatch || g_calls < 1) {
    fprintf(stderr, "usage: rel_getattr [THREADS [BATCH [CALLS]]]\n");
    return 64;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  static pthread_t ids[kMaxBatch];
  for (int first = 0; first < threads; first += batch) {
    int n = threads - first < batch ? threads - first : batch;
    for (int i = 0; i < n; ++i) {
      if (pthread_create(&ids[i], &attr, thread_main, (void*)(uintptr_t)(first + i)) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
      }
    }
    for (int i = 0; i < n; ++i) pthread_join(ids[i], NULL);
  }
  pthread_attr_destroy(&attr);
  int local = 0;
  int main_ok = 0;
  for (int i = 0; i < g_calls; ++i) main_ok += check_own_stack(opaque(&local));
  long checked = atomic_load(&g_checked), stack_ok = atomic_load(&g_stack_ok);
  printf("getattr threads=%d calls=%ld stack_ok=%ld main_ok=%d\n", threads, checked, stack_ok,
         main_ok);
  return checked == (long)threads * g_calls && stack_ok == checked && main_ok == g_calls ? 0 : 1;
}
