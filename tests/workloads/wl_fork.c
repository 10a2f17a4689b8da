/* fork(): the child inherits the live objects and allocates more; each process writes its own
 * profile.
 *
 *   wl_fork [N]   (default 100; N must be a multiple of 4)
 *
 * Parent, before fork: site_before_fork, N x 1000 bytes.
 * Child: frees the first N/4 inherited objects, allocates N x 2000 at site_child_alloc, exits 0.
 * Parent: waits for the child, allocates N x 3000 at site_parent_after.
 *
 * Parent profile: site_before_fork N x 1000, site_parent_after N x 3000, no site_child_alloc.
 * Child profile: site_before_fork 3N/4 x 1000, site_child_alloc N x 2000, no site_parent_after.
 * Prints "parent" (and the child prints "child") to stdout, and "wl_fork: child PID" to stderr;
 * exits 0 only if the child did. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

static void** g_inherited;
static void** g_child;
static void** g_parent;

__attribute__((noinline)) void site_before_fork(long n) {
  for (long i = 0; i < n; ++i) g_inherited[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_child_alloc(long n) {
  for (long i = 0; i < n; ++i) g_child[i] = wl_opaque(wl_check(malloc(2000)));
}

__attribute__((noinline)) void site_parent_after(long n) {
  for (long i = 0; i < n; ++i) g_parent[i] = wl_opaque(wl_check(malloc(3000)));
}

int main(int argc, char** argv) {
  long n = wl_arg(argc, argv, 1, 100);
  if (n % 4 != 0) return 64;
  g_inherited = wl_slots(n);
  g_child = wl_slots(n);
  g_parent = wl_slots(n);
  site_before_fork(n);
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 70;
  if (pid == 0) {
    for (long i = 0; i < n / 4; ++i) free(wl_opaque(g_inherited[i]));
    site_child_alloc(n);
    fprintf(stderr, "wl_fork: child %d\n", (int)getpid());
    printf("child\n");
    exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 71;
  site_parent_after(n);
  printf("parent\n");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 72;
}
