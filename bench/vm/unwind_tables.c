// What a stack walker's first reads of a big program's unwind tables cost on this machine, as page
// faults against one MADV_POPULATE_READ of the tables (docs/benchmarks.md, part 14, "where the
// make's overhead goes"):
//
//   gcc -O2 bench/vm/unwind_tables.c -o /tmp/unwind_tables && /tmp/unwind_tables [ELF_FILE]
//
// The tables are a program's .eh_frame_hdr and .eh_frame (GCC 12's cc1 by default, or the ELF file
// given), found from its section headers and mapped fresh each round as the loader maps them
// (private, read-only): a lookup is a binary search of the header's table (16 probes) and a read of
// the FDE it finds, so each round reads 16 places in the header and 20 random places in .eh_frame,
// the first touches a process's first rules make.
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static const int kRounds = 200;

// Where the two sections lie in the file: the header's page, and the bytes from it to the header's
// end (where .eh_frame starts, as the linker places it) and from there to .eh_frame's end.
static size_t g_offset, g_header_bytes, g_frame_bytes;

static int FindTables(int fd) {
  Elf64_Ehdr ehdr;
  if (pread(fd, &ehdr, sizeof(ehdr), 0) != (ssize_t)sizeof(ehdr) ||
      memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64) {
    return 0;
  }
  Elf64_Shdr names;
  if (pread(fd, &names, sizeof(names), (off_t)(ehdr.e_shoff + ehdr.e_shstrndx * sizeof(names))) !=
      (ssize_t)sizeof(names)) {
    return 0;
  }
  Elf64_Shdr header = {0}, frame = {0};
  for (unsigned i = 0; i < ehdr.e_shnum; i++) {
    Elf64_Shdr section;
    char name[16] = {0};
    if (pread(fd, &section, sizeof(section), (off_t)(ehdr.e_shoff + i * sizeof(section))) !=
            (ssize_t)sizeof(section) ||
        pread(fd, name, sizeof(name) - 1, (off_t)(names.sh_offset + section.sh_name)) < 0) {
      return 0;
    }
    if (strcmp(name, ".eh_frame_hdr") == 0) header = section;
    if (strcmp(name, ".eh_frame") == 0) frame = section;
  }
  if (header.sh_size == 0 || frame.sh_offset < header.sh_offset) return 0;
  g_offset = header.sh_offset & ~(size_t)4095;
  g_header_bytes = frame.sh_offset - g_offset;
  g_frame_bytes = frame.sh_size;
  return 1;
}

static double NowUs(void) {
  struct timespec t;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// The reads of one round; returns a sum so that the compiler keeps them.
static unsigned Touch(const volatile unsigned char* tables) {
  unsigned sum = 0;
  size_t low = 0, high = g_header_bytes / 8, key = (size_t)rand();
  for (int i = 0; i < 16; i++) {
    size_t middle = (low + high) / 2;
    sum += tables[middle * 8];
    if ((key >> i) & 1) {
      low = middle;
    } else {
      high = middle;
    }
  }
  for (int i = 0; i < 20; i++) sum += tables[g_header_bytes + (size_t)rand() % g_frame_bytes];
  return sum;
}

int main(int argc, char** argv) {
  const char* program = argc > 1 ? argv[1] : "/usr/lib/gcc/x86_64-linux-gnu/12/cc1";
  int fd = open(program, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    perror(program);
    return 1;
  }
  if (!FindTables(fd)) {
    fprintf(stderr, "%s: no .eh_frame_hdr followed by .eh_frame\n", program);
    return 1;
  }
  const size_t bytes = g_header_bytes + g_frame_bytes;
  double faults_us = 0, populated_us = 0;
  unsigned sum = 0;
  srand(1);
  for (int round = 0; round < kRounds; round++) {
    for (int populate = 0; populate < 2; populate++) {
      void* tables = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, (off_t)g_offset);
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
