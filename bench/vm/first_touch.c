// What a page fault, a system call, a first vDSO clock read and a dladdr cost on this machine,
// against making pages present with MADV_POPULATE_WRITE (docs/benchmarks.md, part 14, "what a
// process pays on this VM"):
//
//   gcc -O2 bench/vm/first_touch.c -o /tmp/first_touch && /tmp/first_touch
//
// The pages are 32 at a time (a 128 KiB table, the size of heaprec's rule cache), mapped fresh and
// unmapped each round, so that neither huge pages nor a warm mapping flatter either way.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC,
          &t);  // not the vDSO: its first read is measured below
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  const int rounds = 2000, pages = 32;
  const size_t bytes = (size_t)pages * 4096;
  double faulting = 0, populating = 0;
  for (int r = 0; r < rounds; ++r) {
    char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double t0 = Now();
    for (int i = 0; i < pages; ++i) p[(size_t)i * 4096] = 1;
    faulting += Now() - t0;
    munmap(p, bytes);
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    t0 = Now();
    madvise(p, bytes, MADV_POPULATE_WRITE);
    for (int i = 0; i < pages; ++i) p[(size_t)i * 4096] = 1;
    populating += Now() - t0;
    munmap(p, bytes);
  }
  const int calls = 200000;
  double t0 = Now();
  for (int i = 0; i < calls; ++i) syscall(SYS_getppid);
  double syscall_us = (Now() - t0) / calls * 1e6;
  struct timespec t;
  t0 = Now();
  clock_gettime(CLOCK_REALTIME, &t);  // the process's first vDSO read: its data pages fault in
  double first_vdso_us = (Now() - t0) * 1e6;
  // dladdr finds the nearest symbol by reading the whole symbol table of the object (libc's here).
  Dl_info info;
  t0 = Now();
  dladdr((void*)malloc, &info);
  double first_dladdr_us = (Now() - t0) * 1e6;
  t0 = Now();
  dladdr((void*)free, &info);
  double dladdr_us = (Now() - t0) * 1e6;
  printf("first write to a page: %.2f us as a fault, %.2f us populated with its neighbours\n",
         faulting / rounds / pages * 1e6, populating / rounds / pages * 1e6);
  printf("a system call (getppid): %.2f us; the first vDSO clock_gettime: %.1f us\n", syscall_us,
         first_vdso_us);
  printf("dladdr on a libc function: %.1f us the first time, %.1f us the second\n", first_dladdr_us,
         dladdr_us);
  return 0;
}
