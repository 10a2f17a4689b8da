/* Threads allocating known amounts, and objects freed by a thread other than their allocator.
 *
 *   wl_threads [THREADS [PER_THREAD]]   (defaults 4 and 100; PER_THREAD must be even)
 *
 * Phase 1: thread t allocates PER_THREAD objects of 1000 + 8 t bytes at site_thread_alloc.
 * Barrier. Phase 2: thread t frees the odd-indexed objects of thread (t + 1) % THREADS (a
 * different thread whenever THREADS > 1), frees all of main's objects with index % THREADS == t,
 * and allocates PER_THREAD objects of 2000 bytes at site_thread_after.
 * Before the threads start, main allocates THREADS * PER_THREAD objects of 3000 bytes at
 * site_main_alloc_thread_free, all freed by the threads.
 *
 * Live at exit: site_thread_alloc: PER_THREAD/2 objects of 1000 + 8 t per thread t;
 * site_thread_after: THREADS * PER_THREAD x 2000; site_main_alloc_thread_free: none. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "wl_common.h"

static long g_threads;
static long g_per_thread;
static void** g_objects; /* [thread][index] */
static void** g_after;
static void** g_main;
static pthread_barrier_t g_barrier;

__attribute__((noinline)) void site_thread_alloc(long t) {
  for (long i = 0; i < g_per_thread; ++i) {
    g_objects[t * g_per_thread + i] = wl_opaque(wl_check(malloc(1000 + 8 * (size_t)t)));
  }
}

__attribute__((noinline)) void site_thread_after(long t) {
  for (long i = 0; i < g_per_thread; ++i) {
    g_after[t * g_per_thread + i] = wl_opaque(wl_check(malloc(2000)));
  }
}

__attribute__((noinline)) void site_main_alloc_thread_free(long count) {
  for (long i = 0; i < count; ++i) g_main[i] = wl_opaque(wl_check(malloc(3000)));
}

static void* Worker(void* arg) {
  long t = (long)arg;
  site_thread_alloc(t);
  pthread_barrier_wait(&g_barrier);
  long victim = (t + 1) % g_threads;
  for (long i = 1; i < g_per_thread; i += 2) free(wl_opaque(g_objects[victim * g_per_thread + i]));
  for (long i = t; i < g_threads * g_per_thread; i += g_threads) free(wl_opaque(g_main[i]));
  site_thread_after(t);
  return NULL;
}

int main(int argc, char** argv) {
  g_threads = wl_arg(argc, argv, 1, 4);
  g_per_thread = wl_arg(argc, argv, 2, 100);
  if (g_threads < 1 || g_per_thread % 2 != 0) {
    fprintf(stderr, "THREADS >= 1 and an even PER_THREAD, please\n");
    return 64;
  }
  g_objects = wl_slots(g_threads * g_per_thread);
  g_after = wl_slots(g_threads * g_per_thread);
  g_main = wl_slots(g_threads * g_per_thread);
  site_main_alloc_thread_free(g_threads * g_per_thread);
  pthread_barrier_init(&g_barrier, NULL, (unsigned)g_threads);
  pthread_t* threads = (pthread_t*)wl_slots(g_threads);
  for (long t = 0; t < g_threads; ++t) {
    if (pthread_create(&threads[t], NULL, Worker, (void*)t) != 0) abort();
  }
  for (long t = 0; t < g_threads; ++t) pthread_join(threads[t], NULL);
  printf("threads=%ld per_thread=%ld\n", g_threads, g_per_thread);
  return 0;
}
