/* A stand-in for a containerized service, for container_test.sh.
 *
 *   service sidecar   allocates and exits: a process of the image that is not the service
 *   service serve     holds a cache (fill_cache), leaves an orphan behind (a child's child that
 *                     execs `sleep`, as a service spawning helpers does), prints "ready <orphan>"
 *                     with the orphan's pid as its namespace sees it, then waits for a signal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../workloads/wl_common.h"

enum { kCacheBlocks = 256, kBlockBytes = 64 * 1024 };

static void* g_cache[kCacheBlocks];

__attribute__((noinline)) static void fill_cache(void) {
  for (int i = 0; i < kCacheBlocks; ++i) {
    g_cache[i] = wl_opaque(wl_check(malloc(kBlockBytes)));
    memset(g_cache[i], i, kBlockBytes);
  }
}

/* The orphan: its parent exits at once, so it is re-parented to the namespace's first process. */
static pid_t leave_orphan(void) {
  int report[2];
  if (pipe(report) != 0) exit(70);
  pid_t child = fork();
  if (child == 0) {
    pid_t orphan = fork();
    if (orphan == 0) {
      execl("/bin/sleep", "sleep", "600", (char*)NULL);
      _exit(71);
    }
    ssize_t n = write(report[1], &orphan, sizeof(orphan));
    _exit(n == sizeof(orphan) ? 0 : 72);
  }
  pid_t orphan = 0;
  if (read(report[0], &orphan, sizeof(orphan)) != sizeof(orphan)) exit(73);
  waitpid(child, NULL, 0);
  close(report[0]);
  close(report[1]);
  return orphan;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "sidecar") == 0) {
    void* scratch = wl_opaque(wl_check(malloc(4 << 20)));
    memset(scratch, 1, 4 << 20);
    free(scratch);
    return 0;
  }
  if (argc != 2 || strcmp(argv[1], "serve") != 0) {
    fprintf(stderr, "usage: service sidecar|serve\n");
    return 64;
  }
  fill_cache();
  pid_t orphan = leave_orphan();
  printf("ready %d\n", (int)orphan);
  fflush(stdout);
  for (;;) pause(); /* until SIGTERM ends it, with its default action */
}
