// What a stack walker's first reads of a big program's unwind tables cost on this machine, as page
// faults against one MADV_POPULATE_READ of the tables (docs/benchmarks.md, part 14, "where the
// make's overhead goes"):
//
//   gcc -O2 bench/vm/unwind_tables.c -o /tmp/unwind_tables && /tmp/unwind_tables
//
// The tables are cc1's .eh_frame_hdr and .eh_frame (offsets from `readelf -SW` of GCC 12's cc1 on
// Debian 12), mapped fresh each round as the loader maps them (private, read-only): a lookup is a
// binary search of the header's table (16 probes) and a read of the FDE it finds, so each round
// reads 16 places in the header and 20 random places in .eh_frame, the first touches a process's
// first rules make.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static const char kProgram[] = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1";
static const size_t kHeaderOffset = 0x1d19000;  // .eh_frame_hdr at 0x1d19aa4, page-aligned down
static const size_t kHeaderBytes = 0x59000;     // to the start of .eh_frame's page
static const size_t kFrameBytes = 0x24b000;     // .eh_frame, 0x24a494 bytes
static const int kRounds = 200;

static double NowUs(void) {
  struct timespec t;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// The reads of one round; returns a sum so that the compiler keeps them.
static unsigned Touch(const volatile unsigned char* tables) {
  unsigned sum = 0;
  size_t low = 0, high = (kHeaderBytes - 0x1000) / 8, key = (size_t)rand();
  for (int i = 0; i < 16; i++) {
    size_t middle = (low + high) / 2;
    sum += tables[middle * 8];
    if ((key >> i) & 1) {
      low = middle;
    } else {
      high = middle;
    }
  }
  for (int i = 0; i < 20; i++) sum += tables[kHeaderBytes + (size_t)rand() % (kFrameBytes - 64)];
  return sum;
}

int main(void) {
  int fd = open(kProgram, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    perror(kProgram);
    return 1;
  }
  const size_t bytes = kHeaderBytes + kFrameBytes;
  double faults_us = 0, populated_us = 0;
  unsigned sum = 0;
  srand(1);
  for (int round = 0; round < kRounds; round++) {
    for (int populate = 0; populate < 2; populate++) {
      void* tables = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, (off_t)kHeaderOffset);
      if (tables == MAP_FAILED) {
        perror("mmap");
        return 1;
      }
      double start = NowUs();
      if (populate) madvise(tables, bytes, MADV_POPULATE_READ);
      sum += Touch(tables);
      double took = NowUs() - start;
      if (populate) {
        populated_us += took;
      } else {
        faults_us += took;
      }
      munmap(tables, bytes);
    }
  }
  printf(
      "36 reads by page fault: %.1f us a round; after one MADV_POPULATE_READ of the %zu KiB: "
      "%.1f us (%u)\n",
      faults_us / kRounds, bytes / 1024, populated_us / kRounds, sum & 1);
  return 0;
}
