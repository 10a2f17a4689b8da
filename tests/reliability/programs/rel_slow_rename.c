/* A disk on which the first peak profile write is slow, made deterministically: preloaded beside
 * libheaprec.so, whose profile writer renames each finished temporary file into place (through
 * the PLT, so this rename is the one it calls; renameat2 for a first write). The first rename to a
 * ".peak." name creates
 * $REL_SLOW_RENAME_DIR/peak-write-started and then waits (at most 30 s) until
 * $REL_SLOW_RENAME_DIR/peak-write-go exists; every other rename is the real one at once.
 * (tests/reliability/peak_test.cc, with programs/rel_peak_burst.c.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_held;  // the first peak write was held already

static void marker_path(char* out, size_t size, const char* name) {
  const char* dir = getenv("REL_SLOW_RENAME_DIR");
  snprintf(out, size, "%s/%s", dir != NULL ? dir : ".", name);
}

// Holds the first rename to a peak profile's name, once.
static void hold_first_peak_write(const char* to) {
  if (strstr(to, ".peak.") == NULL || __atomic_exchange_n(&g_held, 1, __ATOMIC_SEQ_CST)) return;
  char started[4096], go[4096];
  marker_path(started, sizeof(started), "peak-write-started");
  marker_path(go, sizeof(go), "peak-write-go");
  int fd = open(started, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  struct timespec pause = {0, 5 * 1000 * 1000};
  for (int i = 0; i < 30 * 200 && access(go, F_OK) != 0; ++i) nanosleep(&pause, NULL);
}

int rename(const char* from, const char* to) {
  static int (*real_rename)(const char*, const char*);
  if (real_rename == NULL) {
    real_rename = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  }
  hold_first_peak_write(to);
  return real_rename(from, to);
}

// The first write of a file that must not replace another process's uses renameat2.
int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned flags) {
  static int (*real_renameat2)(int, const char*, int, const char*, unsigned);
  if (real_renameat2 == NULL) {
    real_renameat2 =
        (int (*)(int, const char*, int, const char*, unsigned))dlsym(RTLD_NEXT, "renameat2");
  }
  hold_first_peak_write(to);
  return real_renameat2(from_dir, from, to_dir, to, flags);
}
