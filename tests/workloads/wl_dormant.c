/* Dormant mode's workload (tests/e2e/dormant_test.cc): a program that is attached to while it runs.
 *
 * Before it says "ready PID" it allocates what must never appear in a profile: one 1 MiB block
 * held to the end (pre_attach_hold) and a pool of small blocks (pre_attach_pool). Then it obeys
 * lines on stdin, answering "done" to each, so that the test decides the phases and nothing
 * depends on timing:
 *
 *   alloc_attached   100 blocks of 1,000 bytes, held (post_attach_site)
 *   alloc_detached   100 blocks of 3,000 bytes, held (after_detach_site)
 *   free_pre         from THREADS threads, the pool reallocated (grown) then freed
 *   churn            10,000 malloc/free pairs of 64 bytes (churn_site)
 *   fork             a child that holds 100 blocks of 2,000 bytes (child_site) and exits; waited
 *   exit             "bye", exit status 0
 *
 * A thread notices that sampling was switched on within 1 MiB of its allocations
 * (kInactiveRecheckBytes, src/preload/sampling.cc): before the held blocks of each phase the
 * program passes more than that through notice_switch, so that with --sample-interval 1 every later
 * allocation is recorded.
 *
 * Usage: wl_dormant [THREADS=4] [POOL=4000]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

static void** g_pool;
static long g_pool_size;
static long g_threads;

__attribute__((noinline)) static void* pre_attach_hold(void) {
  return wl_opaque(wl_check(malloc(1 << 20)));
}

__attribute__((noinline)) static void pre_attach_pool(void) {
  g_pool = wl_slots(g_pool_size);
  for (long i = 0; i < g_pool_size; ++i) g_pool[i] = wl_opaque(wl_check(malloc(16 + i % 200)));
}

/* Small blocks, freed at once: the peak profile stays the held blocks'. */
__attribute__((noinline)) static void notice_switch(void) {
  for (int i = 0; i < 1100; ++i) free(wl_opaque(wl_check(malloc(1000))));
}

__attribute__((noinline)) static void post_attach_site(void** held) {
  for (int i = 0; i < 100; ++i) held[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) static void after_detach_site(void** held) {
  for (int i = 0; i < 100; ++i) held[i] = wl_opaque(wl_check(malloc(3000)));
}

__attribute__((noinline)) static void churn_site(void) {
  for (int i = 0; i < 10000; ++i) free(wl_opaque(wl_check(malloc(64))));
}

__attribute__((noinline)) static void child_site(void** held) {
  for (int i = 0; i < 100; ++i) held[i] = wl_opaque(wl_check(malloc(2000)));
}

static void fork_child(void) {
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) abort();
  if (child == 0) {
    notice_switch();
    child_site(wl_slots(100));
    exit(0);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    abort();
  }
}

/* Thread `index` of g_threads: its share of the pool, grown with realloc, then freed. */
static void* free_share(void* arg) {
  long index = (long)arg;
  for (long i = index; i < g_pool_size; i += g_threads) {
    g_pool[i] = wl_opaque(wl_check(realloc(g_pool[i], 300 + i % 500)));
  }
  for (long i = index; i < g_pool_size; i += g_threads) free(g_pool[i]);
  return NULL;
}

static void free_pre(void) {
  pthread_t threads[64];
  long n = g_threads < 64 ? g_threads : 64;
  for (long i = 0; i < n; ++i) {
    if (pthread_create(&threads[i], NULL, free_share, (void*)i) != 0) abort();
  }
  for (long i = 0; i < n; ++i) pthread_join(threads[i], NULL);
}

int main(int argc, char** argv) {
  g_threads = wl_arg(argc, argv, 1, 4);
  g_pool_size = wl_arg(argc, argv, 2, 4000);
  if (g_threads < 1) g_threads = 1;
  void* hold = pre_attach_hold();
  pre_attach_pool();
  void** attached = wl_slots(100);
  void** detached = wl_slots(100);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof(line), stdin) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    if (strcmp(line, "alloc_attached") == 0) {
      notice_switch();
      post_attach_site(attached);
    } else if (strcmp(line, "alloc_detached") == 0) {
      notice_switch();
      after_detach_site(detached);
    } else if (strcmp(line, "free_pre") == 0) {
      free_pre();
    } else if (strcmp(line, "churn") == 0) {
      churn_site();
    } else if (strcmp(line, "fork") == 0) {
      fork_child();
    } else if (strcmp(line, "exit") == 0) {
      break;
    }
    printf("done %s\n", line);
    fflush(stdout);
  }
  printf("bye\n");
  wl_opaque(hold);
  return 0;
}
