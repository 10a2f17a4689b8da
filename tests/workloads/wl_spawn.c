/* Runs `sh -c COMMAND` and waits for it: heaprec follows exec into the grandchild.
 *
 *   wl_spawn [--vfork | --posix-spawn] COMMAND
 *
 * The child is started with fork and execl by default, or with vfork or posix_spawn.  *
 * Allocates 100 x 1000 bytes at site_spawn_parent first. Exits with the command's status. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

__attribute__((noinline)) void site_spawn_parent(void** slots) {
  for (int i = 0; i < 100; ++i) slots[i] = wl_opaque(wl_check(malloc(1000)));
}

extern char** environ;

int main(int argc, char** argv) {
  int mode = 0; /* 0 fork, 1 vfork, 2 posix_spawn */
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--vfork") == 0) mode = 1, first = 2;
  if (argc > 1 && strcmp(argv[1], "--posix-spawn") == 0) mode = 2, first = 2;
  if (argc <= first) return 64;
  const char* command = argv[first];
  site_spawn_parent(wl_slots(100));
  fflush(stdout);
  pid_t pid;
  if (mode == 2) {
    char* child_argv[] = {"sh", "-c", (char*)command, NULL};
    if (posix_spawn(&pid, "/bin/sh", NULL, NULL, child_argv, environ) != 0) return 70;
  } else {
    pid = mode == 1 ? vfork() : fork();
    if (pid < 0) return 70;
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", command, (char*)NULL);
      _exit(127);
    }
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 71;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
