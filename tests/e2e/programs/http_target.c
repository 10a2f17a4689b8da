/* The program the HTTP endpoint tests (http_endpoint_test.cc) fetch profiles from.
 *
 *   http_target                   serve: allocate, print "ready", then follow stdin
 *   http_target fork-exec PROG... fork a child that execs PROG... and posix_spawn PROG... too,
 *                                 wait for both (printing "children 0 0" with their exit
 *                                 statuses), then as above
 *   http_target child             allocate at http_site_child, print "child", exit 0
 *
 * At start: 64 blocks of 64 KiB at http_site_live, kept (4 MiB live). Then, per stdin line:
 * "more" allocates 64 more blocks of 64 KiB at http_site_more and prints "more"; "exec" execs this
 * program again without arguments (which serves again). At the end of stdin: prints "done" and
 * exits 3, a status the tests check is the program's own. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../workloads/wl_common.h"

extern char** environ;

enum { kBlocks = 64, kBlockBytes = 64 * 1024 };

static void* g_live[kBlocks];
static void* g_more[kBlocks];
static void* g_child[kBlocks];

__attribute__((noinline)) void http_site_live(void) {
  for (int i = 0; i < kBlocks; ++i) g_live[i] = wl_opaque(wl_check(malloc(kBlockBytes)));
}

__attribute__((noinline)) void http_site_more(void) {
  for (int i = 0; i < kBlocks; ++i) g_more[i] = wl_opaque(wl_check(malloc(kBlockBytes)));
}

__attribute__((noinline)) void http_site_child(void) {
  for (int i = 0; i < kBlocks; ++i) g_child[i] = wl_opaque(wl_check(malloc(kBlockBytes)));
}

static int WaitStatus(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void StartChildren(char** program) {
  fflush(stdout);
  pid_t forked = fork();
  if (forked == 0) {
    execv(program[0], program);
    _exit(127);
  }
  pid_t spawned = -1;
  if (posix_spawn(&spawned, program[0], NULL, NULL, program, environ) != 0) spawned = -1;
  int forked_status = WaitStatus(forked);
  int spawned_status = WaitStatus(spawned);
  printf("children %d %d\n", forked_status, spawned_status);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 2 && strcmp(argv[1], "child") == 0) {
    http_site_child();
    printf("child\n");
    return 0;
  }
  http_site_live();
  if (argc >= 3 && strcmp(argv[1], "fork-exec") == 0) StartChildren(argv + 2);
  printf("ready\n");
  char line[64];
  while (fgets(line, sizeof(line), stdin) != NULL) {
    if (strcmp(line, "more\n") == 0) {
      http_site_more();
      printf("more\n");
    } else if (strcmp(line, "exec\n") == 0) {
      char* again[] = {argv[0], NULL};
      execv(argv[0], again);
      return 126;
    }
  }
  printf("done\n");
  return 3;
}
