/* A plain program with a known live heap, for the scenarios about configuration, output files,
 * symbols and security.
 *
 *   rel_simple COUNT SIZE [OPTIONS]
 *     COUNT blocks at site_simple_keep, kept live; block i has SIZE + (i % SPREAD) bytes
 *     --spread N         sizes vary over N values (default 1: all SIZE bytes)
 *     --fsize BYTES      setrlimit(RLIMIT_FSIZE, BYTES) and ignore SIGXFSZ before exiting, so that
 *                        writing a file larger than BYTES fails with EFBIG
 *     --ready FILE       when the heap is allocated, write the pid to FILE (created atomically)...
 *     --go FILE          ...then wait until FILE exists before exiting
 *
 * Prints "simple count=COUNT bytes=TOTAL"; exits 0. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

__attribute__((noinline)) long site_simple_keep(long count, long size, long spread) {
  long total = 0;
  for (long i = 0; i < count; ++i) {
    size_t n = (size_t)(size + i % spread);
    void* p = opaque(malloc(n));
    if (p == NULL) abort();
    memset(p, (int)i, n < 32 ? n : 32);
    total += (long)n;
  }
  return total;
}

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  long count = atol(argv[1]), size = atol(argv[2]), spread = 1, fsize = -1;
  const char* ready = NULL;
  const char* go = NULL;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--spread") == 0) {
      spread = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--fsize") == 0) {
      fsize = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--ready") == 0) {
      ready = argv[i + 1];
    } else if (strcmp(argv[i], "--go") == 0) {
      go = argv[i + 1];
    } else {
      return 64;
    }
  }
  if (spread < 1) return 64;
  long total = site_simple_keep(count, size, spread);
  if (ready != NULL) {
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.part", ready);
    FILE* f = fopen(temporary, "w");
    if (f == NULL) return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    if (rename(temporary, ready) != 0) return 1;
  }
  if (go != NULL) {
    while (access(go, F_OK) != 0) {
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  printf("simple count=%ld bytes=%ld\n", count, total);
  fflush(stdout);
  if (fsize >= 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {(rlim_t)fsize, (rlim_t)fsize};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 1;
  }
  return 0;
}
