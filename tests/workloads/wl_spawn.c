/* Runs `sh -c COMMAND` and waits for it: heaprec follows exec into the grandchild.
 *
 *   wl_spawn COMMAND
 *
 * Allocates 100 x 1000 bytes at site_spawn_parent first. Exits with the command's status. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

__attribute__((noinline)) void site_spawn_parent(void** slots) {
  for (int i = 0; i < 100; ++i) slots[i] = wl_opaque(wl_check(malloc(1000)));
}

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  site_spawn_parent(wl_slots(100));
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 70;
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", argv[1], (char*)NULL);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 71;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
