// Grows its heap by 1 MiB blocks and holds them, for the heap record tests (heap_record_test.cc):
// `rel_grow N` says "ready PID", waits for a line on stdin, allocates N blocks (each one said as
// "grown K"), says "held N" and then waits to be killed; `rel_grow forever` grows until it is
// killed (by the OOM killer, under a cgroup's memory limit); `rel_grow burst N` allocates N blocks,
// frees them all at once, says "freed N" and waits to be killed: its peak came and went in a
// fraction of a second; `rel_grow exit N` allocates N blocks at once, says "record INODE" (the heap
// record heaprec keeps for it, as its mappings show, once there is one) and exits normally;
// `rel_grow clone N` does the same, but between its first N blocks and N more starts a child with
// a raw clone (no fork handlers run) that exits normally; `rel_grow blocked N DIR` allocates N
// blocks, says "record INODE", puts a directory where its final profile would go under the tests'
// template (DIR/p.PID.pb.gz) and exits normally: its final profile cannot be written. Every block
// is written to, so that it is resident and counts against the limit.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

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

// The inode of the heap record this process maps, or 0 when none is mapped within 10 s (the dump
// thread makes it soon after the heap passes 64 KiB).
static unsigned long record_inode(void) {
  struct timespec pause = {0, 10 * 1000 * 1000};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    FILE* maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return 0;
    char line[4352];
    unsigned long inode = 0;
    while (inode == 0 && fgets(line, sizeof(line), maps) != NULL) {
      char path[4096] = "";
      unsigned long candidate = 0;
      if (sscanf(line, "%*s %*s %*s %*s %lu %4095s", &candidate, path) == 2 && strlen(path) > 7 &&
          strcmp(path + strlen(path) - 7, ".record") == 0) {
        inode = candidate;
      }
    }
    fclose(maps);
    if (inode != 0) return inode;
    nanosleep(&pause, NULL);
  }
  return 0;
}

int main(int argc, char** argv) {
  int burst = argc == 3 && strcmp(argv[1], "burst") == 0;
  int then_exit = argc == 3 && strcmp(argv[1], "exit") == 0;
  int with_clone = argc == 3 && strcmp(argv[1], "clone") == 0;
  int blocked = argc == 4 && strcmp(argv[1], "blocked") == 0;
  if (argc != 2 && !burst && !then_exit && !with_clone && !blocked) {
    fprintf(stderr, "usage: rel_grow N|forever|burst N|exit N|clone N|blocked N DIR\n");
    return 2;
  }
  if (blocked) {
    for (long held = atol(argv[2]); held > 0; --held) grow_block();
    say("record", (long)record_inode());
    char profile[4096];
    snprintf(profile, sizeof(profile), "%s/p.%ld.pb.gz", argv[3], (long)getpid());
    return mkdir(profile, 0700) == 0 ? 0 : 3;
  }
  if (then_exit || with_clone) {
    for (long held = atol(argv[2]); held > 0; --held) grow_block();
    say("record", (long)record_inode());
    if (with_clone) {
      long child = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
      if (child == 0) exit(0);  // exit's handlers run, heaprec's destructor among them
      if (child < 0 || waitpid((pid_t)child, NULL, 0) != child) return 3;
      for (long held = atol(argv[2]); held > 0; --held) grow_block();
      say("record", (long)record_inode());
    }
    return 0;
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
