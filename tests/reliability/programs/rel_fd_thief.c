/* A program that closes descriptors it does not own while heaprec writes a profile
 * (tests/reliability/own_files_test.cc), with rel_slow_rename.so holding that write half-way.
 *
 *   rel_fd_thief DIR low|reuse
 *     holds 8 MiB at site_hold (heaprec captures a peak and starts writing it), waits until
 *     DIR/peak-write-started exists, then
 *       low    closes 3 to 9, as bash 5.2 closes 3 and 4 twice in $(...), and opens DIR/own.log,
 *              which gets the lowest free number;
 *       reuse  closes every open descriptor above 2 and opens DIR/own.log onto each number that
 *              named a file in DIR (heaprec's), as a program reusing numbers it believes its own;
 *     writes "own line 1" to own.log, creates DIR/peak-write-go, waits until the peak profile
 *     DIR/p.PID.peak.pb.gz exists, writes "own line 2", checks that every number it dup'd is
 *     still open, and prints "kept=K of N".
 *
 * Exits 0; 2 if the peak write never starts or never finishes within 30 s. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rel_common.h"

enum { kBlock = 64 * 1024, kBlocks = 128, kMaxFd = 1024 };

static void* g_blocks[kBlocks];

__attribute__((noinline)) void site_hold(void) {
  for (int i = 0; i < kBlocks; ++i) g_blocks[i] = opaque(checked(malloc(kBlock)));
}

static void say(int fd, const char* line) {
  ssize_t ignored = write(fd, line, strlen(line));
  (void)ignored;
}

int main(int argc, char** argv) {
  if (argc != 3) return 64;
  const char* dir = argv[1];
  int reuse = strcmp(argv[2], "reuse") == 0;
  char started[4096], go[4096], log[4096], peak[4096];
  snprintf(started, sizeof(started), "%s/peak-write-started", dir);
  snprintf(go, sizeof(go), "%s/peak-write-go", dir);
  snprintf(log, sizeof(log), "%s/own.log", dir);
  snprintf(peak, sizeof(peak), "%s/p.%d.peak.pb.gz", dir, (int)getpid());
  site_hold();
  if (!wait_for_file(started, 30)) return 2;

  static int closed[kMaxFd];
  int closed_count = 0;
  for (int fd = 3; fd < (reuse ? kMaxFd : 10); ++fd) {
    if (fcntl(fd, F_GETFD) >= 0) {
      char link[64], target[256] = "";
      snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
      ssize_t n = readlink(link, target, sizeof(target) - 1);
      if (n > 0) target[n] = '\0';
      // Only heaprec's numbers (files in DIR) are reused: the harness's inherited pipes are
      // closed like everything else but are not the point.
      if (strncmp(target, dir, strlen(dir)) == 0) closed[closed_count++] = fd;
    }
    close(fd);
  }
  int own = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (own < 0) return 3;
  int dups = 0;
  if (reuse) {
    for (int i = 0; i < closed_count; ++i) {
      if (closed[i] != own && dup2(own, closed[i]) == closed[i]) closed[dups++] = closed[i];
    }
  }
  say(own, "own line 1\n");
  touch_file(go);
  if (!wait_for_file(peak, 30)) return 2;
  say(own, "own line 2\n");
  int kept = 0;
  for (int i = 0; i < dups; ++i) {
    if (fcntl(closed[i], F_GETFD) >= 0) {
      ++kept;
    } else {
      fprintf(stderr, "rel_fd_thief: descriptor %d was closed\n", closed[i]);
    }
  }
  printf("kept=%d of %d\n", kept, dups);
  for (int i = 0; i < kBlocks; ++i) free(g_blocks[i]);
  return 0;
}
