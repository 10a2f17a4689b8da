/* wl_children CHILDREN BLOCKS SIZE: forks CHILDREN processes, each of which allocates BLOCKS blocks
 * of SIZE bytes in hold() and exits without freeing them; the parent holds nothing. Under heaprec
 * run each child writes its own profile: merged, they hold CHILDREN x BLOCKS x SIZE bytes. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void hold(int blocks, size_t size) {
  for (int i = 0; i < blocks; ++i) {
    char* block = malloc(size);
    if (block == NULL) _exit(2);
    memset(block, 1, size);
  }
}

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  int children = atoi(argv[1]), blocks = atoi(argv[2]);
  size_t size = (size_t)strtoul(argv[3], NULL, 10);
  for (int i = 0; i < children; ++i) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      hold(blocks, size);
      exit(0);
    }
  }
  int status, failed = 0;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  return failed;
}
