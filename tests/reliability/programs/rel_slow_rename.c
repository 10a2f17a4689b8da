/* A disk on which heaprec's first peak profile write stops half-way, made deterministically:
 * preloaded beside libheaprec.so, whose profile writer calls these functions through the PLT. At
 * the point $REL_SLOW_DISK_HOLD names, in the first peak write of the process, it creates
 * $REL_SLOW_RENAME_DIR/peak-write-started and then waits (at most 30 s) until
 * $REL_SLOW_RENAME_DIR/peak-write-go exists:
 *   rename (default)  the finished file's rename (or renameat2, for a first write) into place;
 *   write             the first write into the peak profile's temporary file;
 *   fstat             the second fstat of that file (the first records what heaprec created; the
 *                     second is its check before the first write).
 * Everything else is the real function at once. (tests/reliability/peak_test.cc with
 * programs/rel_peak_burst.c; own_files_test.cc with programs/rel_fd_thief.c.) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rel_common.h"

static int g_held;  // the first peak write was held already

static void marker_path(char* out, size_t size, const char* name) {
  const char* dir = getenv("REL_SLOW_RENAME_DIR");
  snprintf(out, size, "%s/%s", dir != NULL ? dir : ".", name);
}

static int holding_at(const char* point) {
  const char* hold = getenv("REL_SLOW_DISK_HOLD");
  return strcmp(hold != NULL && hold[0] != '\0' ? hold : "rename", point) == 0;
}

// Whether `fd` is a peak profile's temporary file.
static int is_peak_temporary(int fd) {
  char link[64], target[4096];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return strstr(target, ".peak.") != NULL && strstr(target, ".tmp.") != NULL;
}

// Holds the first peak write, once.
static void hold_once(void) {
  if (__atomic_exchange_n(&g_held, 1, __ATOMIC_SEQ_CST)) return;
  char started[4096], go[4096];
  marker_path(started, sizeof(started), "peak-write-started");
  marker_path(go, sizeof(go), "peak-write-go");
  touch_file(started);
  wait_for_file(go, 30);
}

// The real function, looked up once.
#define REAL(name)                      \
  static __typeof__(name)* real_##name; \
  if (real_##name == NULL) real_##name = (__typeof__(name)*)dlsym(RTLD_NEXT, #name)

int rename(const char* from, const char* to) {
  REAL(rename);
  if (holding_at("rename") && strstr(to, ".peak.") != NULL) hold_once();
  return real_rename(from, to);
}

// The first write of a file that must not replace another process's uses renameat2.
int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned flags) {
  REAL(renameat2);
  if (holding_at("rename") && strstr(to, ".peak.") != NULL) hold_once();
  return real_renameat2(from_dir, from, to_dir, to, flags);
}

ssize_t write(int fd, const void* data, size_t size) {
  REAL(write);
  if (fd > 2 && !__atomic_load_n(&g_held, __ATOMIC_SEQ_CST) && holding_at("write") &&
      is_peak_temporary(fd)) {
    hold_once();
  }
  return real_write(fd, data, size);
}

int fstat(int fd, struct stat* st) {
  REAL(fstat);
  static int peak_fstats;
  if (fd > 2 && !__atomic_load_n(&g_held, __ATOMIC_SEQ_CST) && holding_at("fstat") &&
      is_peak_temporary(fd) && __atomic_add_fetch(&peak_fstats, 1, __ATOMIC_SEQ_CST) == 2) {
    hold_once();
  }
  return real_fstat(fd, st);
}
