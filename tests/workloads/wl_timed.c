/* Programs that run for a while, for the interval and signal dumps.
 *
 *   wl_timed periodic MILLISECONDS   allocates 10 x 1000 bytes at site_periodic every 20 ms
 *                                    for MILLISECONDS, all kept live
 *   wl_timed signal SIGNAL_NUMBER DIR
 *                                    allocates 100 x 1000 bytes at site_before_signal, raises
 *                                    the signal, waits until DIR/p.<pid>.0001.pb.gz (the profile
 *                                    `heaprec run -o DIR/p.%p.pb.gz --dump-signal` writes for it)
 *                                    appears, at most 2 s, then exits 0
 *   wl_timed phases MILLISECONDS [fork]
 *                                    a heap with a story, each phase MILLISECONDS long: grows to
 *                                    32 MiB (32768 x 1024 bytes at site_phase_cache, 4 MiB of them
 *                                    at site_phase_leak), holds, frees the cache (the leak stays
 *                                    to the end), idles; 100 x 256 bytes at site_phase_temporary,
 *                                    each freed at once, every 10 ms throughout. With `fork`, a
 *                                    child forked at the end allocates 1 MiB and exits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wl_common.h"

static void SleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static long NowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

__attribute__((noinline)) void site_periodic(void** slots) {
  for (int i = 0; i < 10; ++i) slots[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_before_signal(void** slots) {
  for (int i = 0; i < 100; ++i) slots[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_phase_cache(void** slots, long count) {
  for (long i = 0; i < count; ++i) slots[i] = wl_opaque(wl_check(malloc(1024)));
}

__attribute__((noinline)) void site_phase_leak(void** slots, long count) {
  for (long i = 0; i < count; ++i) slots[i] = wl_opaque(wl_check(malloc(1024)));
}

__attribute__((noinline)) void site_phase_temporary(void) {
  for (int i = 0; i < 100; ++i) free(wl_opaque(wl_check(malloc(256))));
}

/* Spends `ms` milliseconds in 10 ms steps, each making temporaries, and the first `grow` blocks
 * of `slots` allocated evenly over them (cache first, its last eighth the leak). */
static void Phase(long ms, void** slots, long grow) {
  long start = NowMs(), done = 0;
  while (NowMs() - start < ms) {
    long due = grow * (NowMs() - start) / ms;
    if (due > done) {
      long cache_end = grow - grow / 8;
      if (done < cache_end)
        site_phase_cache(slots + done, (due < cache_end ? due : cache_end) - done);
      if (due > cache_end) {
        long from = done > cache_end ? done : cache_end;
        site_phase_leak(slots + from, due - from);
      }
      done = due;
    }
    site_phase_temporary();
    SleepMs(10);
  }
  if (grow > done) {
    long cache_end = grow - grow / 8, from = done > cache_end ? done : cache_end;
    if (done < cache_end) site_phase_cache(slots + done, cache_end - done);
    site_phase_leak(slots + from, grow - from);
  }
}

static int Phases(long ms, int with_fork) {
  const long blocks = 32768;
  void** slots = wl_slots(blocks);
  Phase(ms, slots, blocks);                                      /* grow */
  Phase(ms, slots, 0);                                           /* hold */
  for (long i = 0; i < blocks - blocks / 8; ++i) free(slots[i]); /* the cache goes */
  Phase(ms, slots, 0);                                           /* idle, the leak held */
  if (with_fork) {
    pid_t child = fork();
    if (child == 0) {
      void** own = wl_slots(1024);
      site_phase_cache(own, 1024);
      SleepMs(250);
      _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) return 1;
  }
  printf("phases\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  if (strcmp(argv[1], "periodic") == 0) {
    long duration = wl_arg(argc, argv, 2, 1000);
    void** slots = wl_slots(10 * (duration / 20 + 2));
    long start = NowMs(), rounds = 0;
    while (NowMs() - start < duration) {
      site_periodic(slots + 10 * rounds++);
      SleepMs(20);
    }
    printf("periodic\n");
    return 0;
  }
  if (strcmp(argv[1], "signal") == 0 && argc > 3) {
    char expected[4096];
    snprintf(expected, sizeof expected, "%s/p.%d.0001.pb.gz", argv[3], (int)getpid());
    int signal_number = (int)wl_arg(argc, argv, 2, SIGUSR2);
    void** slots = wl_slots(100);
    site_before_signal(slots);
    raise(signal_number);
    /* The dump happens on heaprec's own thread: give it time, but no more than needed. */
    for (int waited = 0; waited < 2000; waited += 10) {
      if (access(expected, F_OK) == 0) break;
      SleepMs(10);
    }
    printf("signalled\n");
    return 0;
  }
  if (strcmp(argv[1], "phases") == 0) {
    return Phases(wl_arg(argc, argv, 2, 500), argc > 3 && strcmp(argv[3], "fork") == 0);
  }
  return 64;
}
