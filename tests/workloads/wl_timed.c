/* Programs that run for a while, for the interval and signal dumps.
 *
 *   wl_timed periodic MILLISECONDS   allocates 10 x 1000 bytes at site_periodic every 20 ms
 *                                    for MILLISECONDS, all kept live
 *   wl_timed signal SIGNAL_NUMBER DIR
 *                                    allocates 100 x 1000 bytes at site_before_signal, raises
 *                                    the signal, waits until DIR/p.<pid>.0001.pb.gz (the profile
 *                                    `heaprec run -o DIR/p.%p.pb.gz --dump-signal` writes for it)
 *                                    appears, at most 2 s, then exits 0 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  return 64;
}
