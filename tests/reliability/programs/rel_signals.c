/* Signals that arrive while a thread is inside malloc/free, and a dump signal sent over and over.
 *
 *   rel_signals safe N     a thread churns malloc/realloc/free without pause; the main thread sends
 *                          it SIGUSR1 with pthread_kill N times, waiting for each to be handled.
 *                          The handler only does async-signal-safe things (a counter, getpid).
 *   rel_signals malloc N   the same, but the handler calls malloc and free (not async-signal-safe).
 *                          glibc tolerates that only while neither side takes an arena lock or
 *                          touches the same per-thread cache bin, so here the churning thread only
 *                          frees and reallocates blocks of the same few sizes (100..500 bytes,
 *                          always served by its tcache after warm-up, no realloc) and the handler
 *                          uses other size classes (48 and 700 bytes). Without heaprec this never
 *                          deadlocks; heaprec must not make it.
 *   rel_signals dump N     a thread allocates (keeping a bounded set live) while the main thread
 *                          sends SIGUSR2 to the process N times, 1 ms apart. Meant for
 *                          `--dump-signal SIGUSR2`; when nothing has installed a SIGUSR2 handler
 *                          (an unprofiled run), the program installs an empty one so that the
 *                          signal does not kill it.
 *
 * Prints one deterministic line; exits 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

static atomic_int g_stop;
static int g_tcache_only; /* the churn stays within its tcache: see "malloc" above */
static atomic_long g_handled;
static atomic_long g_rounds;
static volatile sig_atomic_t g_sink;

static void safe_handler(int signal_number) {
  (void)signal_number;
  g_sink = (sig_atomic_t)getpid();
  atomic_fetch_add(&g_handled, 1);
}

__attribute__((noinline)) void site_in_handler(void) {
  void* a = opaque(malloc(48));
  void* b = opaque(malloc(700));
  if (a != NULL) memset(a, 1, 48);
  free(a);
  free(b);
}

static void malloc_handler(int signal_number) {
  (void)signal_number;
  site_in_handler();
  atomic_fetch_add(&g_handled, 1);
}

static void empty_handler(int signal_number) { (void)signal_number; }

static uint32_t next_random(uint32_t* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

__attribute__((noinline)) void* site_churn(void* arg) {
  (void)arg;
  uint32_t seed = 7;
  void* held[16] = {0};
  while (!atomic_load(&g_stop)) {
    for (int i = 0; i < 16; ++i) {
      size_t size = g_tcache_only ? (size_t)(100 * (1 + i % 5)) : 1 + next_random(&seed) % 1500;
      if (held[i] != NULL && i % 3 == 0 && !g_tcache_only) {
        held[i] = opaque(realloc(held[i], size));
      } else {
        free(held[i]);
        held[i] = opaque(malloc(size));
      }
      if (held[i] == NULL) abort();
    }
    atomic_fetch_add(&g_rounds, 1);
  }
  for (int i = 0; i < 16; ++i) free(held[i]);
  return NULL;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static int interrupt_malloc(int n, void (*handler)(int)) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, NULL);
  pthread_t thread;
  if (pthread_create(&thread, NULL, site_churn, NULL) != 0) return 1;
  while (atomic_load(&g_rounds) < 10) sched_yield();
  for (int i = 0; i < n; ++i) {
    long before = atomic_load(&g_handled);
    pthread_kill(thread, SIGUSR1);
    /* Wait for this one to be handled so that every signal is delivered (pending signals of one
     * kind merge). Yield first, then sleep: no assumption about how fast the thread runs. */
    for (long spins = 0; atomic_load(&g_handled) == before; ++spins) {
      if (spins < 1000) {
        sched_yield();
      } else {
        sleep_ms(1);
      }
    }
  }
  atomic_store(&g_stop, 1);
  pthread_join(thread, NULL);
  printf("signals sent=%d handled=%ld\n", n, atomic_load(&g_handled));
  return atomic_load(&g_handled) == n ? 0 : 1;
}

__attribute__((noinline)) void* site_dump_worker(void* arg) {
  (void)arg;
  void* live[256] = {0};
  unsigned i = 0;
  while (!atomic_load(&g_stop)) {
    unsigned slot = i++ % 256;
    free(live[slot]);
    live[slot] = opaque(malloc(64 + slot * 8));
    if (live[slot] == NULL) abort();
    if (slot == 0) atomic_fetch_add(&g_rounds, 1);
  }
  for (unsigned s = 0; s < 256; ++s) free(live[s]);
  return NULL;
}

static int dump_signals(int n) {
  struct sigaction current;
  sigaction(SIGUSR2, NULL, &current);
  if (current.sa_handler == SIG_DFL) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = empty_handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGUSR2, &action, NULL);
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, site_dump_worker, NULL) != 0) return 1;
  while (atomic_load(&g_rounds) < 10) sched_yield();
  for (int i = 0; i < n; ++i) {
    kill(getpid(), SIGUSR2);
    sleep_ms(1);
  }
  atomic_store(&g_stop, 1);
  pthread_join(thread, NULL);
  printf("dump signals sent=%d\n", n);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  int n = atoi(argv[2]);
  if (strcmp(argv[1], "safe") == 0) return interrupt_malloc(n, safe_handler);
  if (strcmp(argv[1], "malloc") == 0) {
    g_tcache_only = 1;
    return interrupt_malloc(n, malloc_handler);
  }
  if (strcmp(argv[1], "dump") == 0) return dump_signals(n);
  return 64;
}
