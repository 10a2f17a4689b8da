/* fork() from a multithreaded program while its other threads allocate without pause, with
 * children that fork again. A fork lands while the other threads are anywhere: inside malloc/free,
 * inside the profiler's slow path, or inside its unwinder, which holds the unwinder's own locks and
 * the dynamic loader's (dl_iterate_phdr) while it looks up the unwind information of a code address
 * it has not seen before. Whatever lock is held at that moment stays held in the child, which has
 * only the forking thread: the child must still allocate, exit and write its profile.
 *
 *   rel_fork_stress [CHILDREN [THREADS [EVERY [PAUSE_US]]]]
 *
 * THREADS threads (default 4) allocate blocks into a window of 64 random slots (a fixed seed per
 * thread), freeing a random slot about as often as they fill one, until the main thread tells them
 * to stop. Each allocation comes from the next of 4096 distinct call sites (churn_alloc), as in a
 * large program, so that stacks keep reaching code addresses an unwinder has not cached yet instead
 * of replaying one stack it cached at the first sample. Sizes go from 16 B to 64 KiB, one per call
 * site: the profile keeps an alloc_* entry per (stack, size) and every child writes all it
 * inherited, so random sizes at every site would make 61 profiles of 65,536 entries each.
 *
 * Once every thread is running, the main thread forks CHILDREN children (default 40), sleeping
 * PAUSE_US microseconds (default 2000) after each fork so that the next one lands wherever the
 * other threads, running freely meanwhile, happen to be; it waits for the children only after the
 * last fork, with waitpid. Every EVERY-th child (default 2: the even ones) first forks a
 * grandchild, which allocates 10 blocks of 5000 bytes at site_grandchild_alloc, frees every other
 * one and leaves with exit(30 + index % 5). Then each child allocates at site_child_alloc: 20
 * blocks of 3000 bytes, every other one freed, or (children without a grandchild whose index is 3
 * mod 4) a single block of 24 bytes, kept, which is rarely sampled, so that such a child reaches
 * its exit dump without unwinding first. A child leaves with exit(10 + index % 7) once its
 * grandchild (if any) left with its own status, and with exit(99) otherwise. Everything leaves with
 * exit(), so every process writes its exit profile.
 *
 * Prints one deterministic line,
 *   fork_stress threads=T children=C ok=C grandchildren=G ok=G
 * and exits 0 when every status was the expected one (1 otherwise, 64 for bad arguments). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rel_common.h"

enum { kMaxThreads = 16, kMaxChildren = 1000, kSlots = 64, kSites = 4096 };

/* The size of each call site's blocks: kSizes[site % 16]. */
static const size_t kSizes[16] = {16,   40,   96,    200,   500,   1000,  2000,  4000,
                                  6000, 9000, 12000, 16384, 24000, 32768, 48000, 65536};

static atomic_int g_stop;
static atomic_int g_started;

__attribute__((noinline)) static void* site_churn_alloc(size_t size, unsigned site) {
  void* p = checked(malloc(size));
  memset(p, (int)site, size < 256 ? size : 256);
  return opaque(p);
}

/* case 0x1000 .. case 0x1fff, each its own call instruction (the argument keeps the compiler from
 * merging them, and the call is not in tail position, so each leaves its own return address). */
/* clang-format off */
#define SITE(n)                        \
  case 0x##n:                          \
    p = site_churn_alloc(size, 0x##n); \
    break;
#define SITE16(n)                                                                              \
  SITE(n##0) SITE(n##1) SITE(n##2) SITE(n##3) SITE(n##4) SITE(n##5) SITE(n##6) SITE(n##7)     \
  SITE(n##8) SITE(n##9) SITE(n##a) SITE(n##b) SITE(n##c) SITE(n##d) SITE(n##e) SITE(n##f)
#define SITE256(n)                                                                             \
  SITE16(n##0) SITE16(n##1) SITE16(n##2) SITE16(n##3) SITE16(n##4) SITE16(n##5) SITE16(n##6) \
  SITE16(n##7) SITE16(n##8) SITE16(n##9) SITE16(n##a) SITE16(n##b) SITE16(n##c) SITE16(n##d) \
  SITE16(n##e) SITE16(n##f)
#define SITE4K(n)                                                                     \
  SITE256(n##0) SITE256(n##1) SITE256(n##2) SITE256(n##3) SITE256(n##4) SITE256(n##5) \
  SITE256(n##6) SITE256(n##7) SITE256(n##8) SITE256(n##9) SITE256(n##a) SITE256(n##b) \
  SITE256(n##c) SITE256(n##d) SITE256(n##e) SITE256(n##f)
/* clang-format on */

__attribute__((noinline)) static void* churn_alloc(size_t size, unsigned site) {
  void* p = NULL;
  switch (0x1000 + site) { SITE4K(1) }
  return opaque(p);
}

static void* churn(void* arg) {
  unsigned index = (unsigned)(uintptr_t)arg;
  uint32_t seed = 0x9e3779b9u * (index + 1);
  unsigned site = index * (kSites / kMaxThreads);
  void* slots[kSlots] = {0};
  long rounds = 0;
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    uint32_t slot = next_random(&seed) % kSlots;
    free(slots[slot]);
    slots[slot] = NULL;
    if (next_random(&seed) % 4 != 0) {
      slot = next_random(&seed) % kSlots;
      free(slots[slot]);
      slots[slot] = churn_alloc(kSizes[site % 16], site);
      site = (site + 1) % kSites;
    }
    if (++rounds == 100) atomic_fetch_add(&g_started, 1);
  }
  for (int i = 0; i < kSlots; ++i) free(slots[i]);
  return NULL;
}

/* Allocates `count` blocks of `size` bytes at `site` and frees every other one. */
static void work(void* (*site)(size_t), int count, size_t size) {
  void* blocks[64];
  for (int i = 0; i < count && i < 64; ++i) blocks[i] = site(size);
  for (int i = 0; i < count && i < 64; i += 2) free(blocks[i]);
}

__attribute__((noinline)) static void* site_child_alloc(size_t size) {
  return opaque(checked(malloc(size)));
}

__attribute__((noinline)) static void* site_grandchild_alloc(size_t size) {
  return opaque(checked(malloc(size)));
}

static int child_status(int index) { return 10 + index % 7; }
static int grandchild_status(int index) { return 30 + index % 5; }

/* The exit status of `pid`, or -1 if it did not exit normally. */
static int wait_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void run_child(int index, int every) {
  pid_t grandchild = 0;
  if (index % every == 0) {
    grandchild = fork();
    if (grandchild < 0) exit(98);
    if (grandchild == 0) {
      work(site_grandchild_alloc, 10, 5000);
      exit(grandchild_status(index));
    }
  }
  if (grandchild == 0 && index % 4 == 3) {
    site_child_alloc(24);
  } else {
    work(site_child_alloc, 20, 3000);
  }
  int ok = grandchild == 0 || wait_status(grandchild) == grandchild_status(index);
  exit(ok ? child_status(index) : 99);
}

int main(int argc, char** argv) {
  int children = argc > 1 ? atoi(argv[1]) : 40;
  int threads = argc > 2 ? atoi(argv[2]) : 4;
  int every = argc > 3 ? atoi(argv[3]) : 2;
  int pause_us = argc > 4 ? atoi(argv[4]) : 2000;
  if (children < 1 || children > kMaxChildren || threads < 1 || threads > kMaxThreads ||
      every < 1 || pause_us < 0) {
    fprintf(stderr, "usage: rel_fork_stress [CHILDREN [THREADS [EVERY [PAUSE_US]]]]\n");
    return 64;
  }
  pthread_t ids[kMaxThreads];
  for (int t = 0; t < threads; ++t) {
    if (pthread_create(&ids[t], NULL, churn, (void*)(uintptr_t)t) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  /* Every thread is allocating before the first fork. */
  while (atomic_load(&g_started) < threads) sched_yield();

  static pid_t pids[kMaxChildren];
  int grandchildren = 0;
  for (int i = 0; i < children; ++i) {
    if (i % every == 0) ++grandchildren;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      exit(1);
    }
    if (pid == 0) run_child(i, every); /* does not return */
    pids[i] = pid;
    if (pause_us > 0) usleep((useconds_t)pause_us);
  }
  int children_ok = 0, grandchildren_ok = 0;
  for (int i = 0; i < children; ++i) {
    int status = wait_status(pids[i]);
    if (status == child_status(i)) {
      ++children_ok;
      if (i % every == 0) ++grandchildren_ok;
    } else {
      fprintf(stderr, "child %d exited with status %d, expected %d\n", i, status, child_status(i));
    }
  }
  atomic_store(&g_stop, 1);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  printf("fork_stress threads=%d children=%d ok=%d grandchildren=%d ok=%d\n", threads, children,
         children_ok, grandchildren, grandchildren_ok);
  return children_ok == children && grandchildren_ok == grandchildren ? 0 : 1;
}
