// What a process's first thread costs on this machine: the CPU time of a program that touches
// 8 MiB and maps and unmaps 64 KiB a hundred times, with and without starting (and joining) one
// thread first, the way heaprec's dump thread is started (256 KiB stack) (docs/benchmarks.md,
// part 14, "what a process pays on this VM"):
//
//   gcc -O2 bench/vm/first_thread.c -o /tmp/first_thread -lpthread
//   for m in 0 1 0 1; do perf stat -r 100 -e task-clock /tmp/first_thread $m; done
//
// Each line printed: the mode, the microseconds the thread's start and join took (wall), and
// those of the map/unmap loop after it.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);  // not the vDSO: its first read faults
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* Nothing(void* arg) { return arg; }

int main(int argc, char** argv) {
  const int with_thread = argc > 1 && argv[1][0] == '1';
  const size_t touched = 8 << 20;
  char* heap = mmap(NULL, touched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (heap == MAP_FAILED) return 1;
  memset(heap, 1, touched);
  double t0 = Now();
  if (with_thread) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_t thread;
    if (pthread_create(&thread, &attr, Nothing, NULL) != 0) return 1;
    pthread_join(thread, NULL);
  }
  double t1 = Now();
  for (int i = 0; i < 100; ++i) {
    char* p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    p[0] = 1;
    munmap(p, 65536);
  }
  double t2 = Now();
  printf("%d %.1f %.1f\n", with_thread, (t1 - t0) * 1e6, (t2 - t1) * 1e6);
  return 0;
}
