// Helpers shared by the reliability test programs (C).
#pragma once

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

// Hides a pointer from the optimizer, so that an allocation whose block is never read still
// happens.
__attribute__((noinline, unused)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

// Ends the program loudly when an allocation fails: the scenarios never expect one to.
__attribute__((unused)) static void* checked(void* p) {
  if (p == NULL) {
    fprintf(stderr, "allocation failed\n");
    abort();
  }
  return p;
}

// Waits until `path` exists, for at most `seconds`: 1 when it does, 0 on time-out. For the programs
// that hand a moment back and forth with a test or a preloaded library through marker files.
__attribute__((unused)) static int wait_for_file(const char* path, int seconds) {
  struct timespec pause = {0, 5 * 1000 * 1000};
  for (int i = 0; i < seconds * 200; ++i) {
    if (access(path, F_OK) == 0) return 1;
    nanosleep(&pause, NULL);
  }
  return 0;
}

// Creates the marker file `path` (empty).
__attribute__((unused)) static void touch_file(const char* path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
}

// A small deterministic generator (fixed seeds make runs repeatable).
__attribute__((unused)) static uint32_t next_random(uint32_t* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}
