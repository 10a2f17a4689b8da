// Grows its heap by 1 MiB blocks and holds them, for the heap record tests (heap_record_test.cc):
// `rel_grow N` says "ready PID", waits for a line on stdin, allocates N blocks (each one said as
// "grown K"), says "held N" and then waits to be killed; `rel_grow forever` grows until it is
// killed (by the OOM killer, under a cgroup's memory limit). Every block is written to, so that it
// is resident and counts against the limit.
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "rel_common.h"

#define BLOCK_BYTES (1 << 20)

static void say(const char* what, long n) {
  char line[64];
  int length = snprintf(line, sizeof(line), "%s %ld\n", what, n);
  if (write(STDOUT_FILENO, line, (size_t)length) != length) _exit(3);
}

__attribute__((noinline)) static void* grow_block(void) {
  void* block = checked(malloc(BLOCK_BYTES));
  memset(block, 1, BLOCK_BYTES);
  return opaque(block);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: rel_grow N|forever\n");
    return 2;
  }
  long target = strcmp(argv[1], "forever") == 0 ? -1 : atol(argv[1]);
  say("ready", (long)getpid());
  char go[16];
  if (read(STDIN_FILENO, go, sizeof(go)) <= 0) return 1;
  for (long held = 1; target < 0 || held <= target; ++held) {
    grow_block();
    say("grown", held);
  }
  say("held", target);
  for (;;) pause();
}
