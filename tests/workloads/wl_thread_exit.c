/* exit() called from a thread other than main, while main is blocked in pthread_join.
 *
 *   wl_thread_exit [N]   (default 100)
 *
 * main: N x 1000 bytes at site_exit_main_live; the thread: N x 2000 bytes at site_exit_thread_live,
 * then exit(3). Both sets are live when the exit profile is written. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "wl_common.h"

static long g_n;
static void** g_main;
static void** g_thread;

__attribute__((noinline)) void site_exit_main_live(long n) {
  for (long i = 0; i < n; ++i) g_main[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_exit_thread_live(long n) {
  for (long i = 0; i < n; ++i) g_thread[i] = wl_opaque(wl_check(malloc(2000)));
}

static void* Exiter(void* arg) {
  (void)arg;
  site_exit_thread_live(g_n);
  printf("exiting from a thread\n");
  exit(3);
}

int main(int argc, char** argv) {
  g_n = wl_arg(argc, argv, 1, 100);
  g_main = wl_slots(g_n);
  g_thread = wl_slots(g_n);
  site_exit_main_live(g_n);
  pthread_t thread;
  if (pthread_create(&thread, NULL, Exiter, NULL) != 0) abort();
  pthread_join(thread, NULL);
  return 0; /* not reached */
}
