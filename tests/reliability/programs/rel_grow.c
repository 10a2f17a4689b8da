// Grows its heap by 1 MiB blocks and holds them, for the heap record tests (heap_record_test.cc):
// `rel_grow N` says "ready PID", waits for a line on stdin, allocates N blocks (each one said as
// "grown K"), says "held N" and then waits to be killed; `rel_grow forever` grows until it is
// killed (by the OOM killer, under a cgroup's memory limit); `rel_grow burst N` allocates N blocks,
// frees them all at once, says "freed N" and waits to be killed: its peak came and went in a
// fraction of a second. Every block is written to, so that it is resident and counts against the
// limit.
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
  int burst = argc == 3 && strcmp(argv[1], "burst") == 0;
  if (argc != 2 && !burst) {
    fprintf(stderr, "usage: rel_grow N|forever|burst N\n");
    return 2;
  }
  long target = burst ? atol(argv[2]) : strcmp(argv[1], "forever") == 0 ? -1 : atol(argv[1]);
  static void* blocks[4096];
  if (target > 4096) return 2;
  say("ready", (long)getpid());
  char go[16];
  if (read(STDIN_FILENO, go, sizeof(go)) <= 0) return 1;
  for (long held = 1; target < 0 || held <= target; ++held) {
    void* block = grow_block();
    if (held <= 4096) blocks[held - 1] = block;
    if (!burst) say("grown", held);
  }
  if (burst) {
    for (long i = 0; i < target; ++i) free(blocks[i]);
    say("freed", target);
  } else {
    say("held", target);
  }
  for (;;) pause();
}
