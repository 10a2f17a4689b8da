/* A signal that arrives while a thread waits inside glibc's malloc for its arena lock, staged so
 * that it happens every run (threads_signals_test.cc, SignalDuringGlibcCallTest).
 *
 *   rel_signal_in_glibc
 *
 * A helper thread holds the main arena's lock: it calls malloc_stats(), which prints each arena's
 * figures with the arena locked, to a `stderr` that is a pipe already full, so its first write
 * blocks. The main thread then calls malloc(100000), which glibc cannot serve from the thread's
 * cache: it waits for the same lock. A watcher thread sends the main thread SIGUSR1 once it is
 * seen waiting (its system call is futex), and looks at what becomes of the signal: either the
 * handler runs there, inside malloc, or the signal stays pending because the thread blocks it.
 * Then it drains the pipe, which lets everything finish. The handler allocates, as the handlers
 * of SignalsInMallocTest do.
 *
 * Prints "handler ran inside malloc" or "signal deferred until malloc returned", and exits 0
 * (64 when the stage could not be set up).
 *
 * The main thread waits, it does not hold the lock, so nothing deadlocks here either way; what the
 * test checks is the mechanism that keeps a handler from running on top of a heaprec call into
 * glibc that does hold it (alloc/tagged_blocks.cc, SignalsDeferred). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int g_handler_entered;
static atomic_int g_verdict; /* 0 undecided, 1 ran inside, 2 deferred */
static atomic_int g_stats_done;
static pid_t g_main_tid;
static atomic_int g_holder_tid;
static int g_pipe[2];

__attribute__((noinline)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

static void allocating_handler(int signal_number) {
  (void)signal_number;
  atomic_store(&g_handler_entered, 1);
  free(opaque(malloc(3000)));
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* /proc/self/task/TID/FILE, read with open and read into `text` (one snapshot), "" when it cannot
 * be read. The main thread polls with it while the holder has the arena locked, so it must not
 * call malloc (fopen would). */
static void read_task_file(pid_t tid, const char* file, char* text, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, file);
  text[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t length = read(fd, text, size - 1);
  close(fd);
  text[length > 0 ? length : 0] = '\0';
}

/* Whether the thread's system call is `number` (it is blocked in it). */
static int in_syscall(pid_t tid, long number) {
  char text[256];
  read_task_file(tid, "syscall", text, sizeof text);
  return text[0] >= '0' && text[0] <= '9' && strtol(text, NULL, 10) == number;
}

/* Whether SIGUSR1 is set in the signal mask on `status`'s line `key` ("SigPnd:", "SigBlk:"). */
static int usr1_in(const char* status, const char* key) {
  const char* line = strstr(status, key);
  if (line == NULL) return 0;
  return (strtoull(line + strlen(key), NULL, 16) >> (SIGUSR1 - 1)) & 1;
}

/* Whether SIGUSR1 is pending on the thread and blocked by it, in one snapshot of its status (the
 * kernel dequeues a signal before it blocks it for its handler: two reads could see both). */
static int usr1_deferred(pid_t tid) {
  char status[4096];
  read_task_file(tid, "status", status, sizeof status);
  return usr1_in(status, "\nSigPnd:") && usr1_in(status, "\nSigBlk:");
}

static void* hold_the_arena(void* arg) {
  (void)arg;
  atomic_store(&g_holder_tid, (int)syscall(SYS_gettid));
  malloc_stats(); /* blocks in its first write, with the main arena locked */
  atomic_store(&g_stats_done, 1);
  return NULL;
}

static void* watch(void* arg) {
  (void)arg;
  /* The holder blocked in its write with the arena locked, then the main thread in its wait. */
  while (atomic_load(&g_holder_tid) == 0 || !in_syscall(atomic_load(&g_holder_tid), SYS_write)) {
    sleep_ms(1);
  }
  while (!in_syscall(g_main_tid, SYS_futex)) sleep_ms(1);
  syscall(SYS_tgkill, getpid(), g_main_tid, SIGUSR1);
  for (;;) {
    if (atomic_load(&g_handler_entered)) {
      atomic_store(&g_verdict, 1);
      break;
    }
    if (usr1_deferred(g_main_tid)) {
      atomic_store(&g_verdict, 2);
      break;
    }
    sleep_ms(1);
  }
  char sink[4096];
  while (!atomic_load(&g_stats_done)) {
    if (read(g_pipe[0], sink, sizeof sink) <= 0) sleep_ms(1);
  }
  return NULL;
}

int main(void) {
  g_main_tid = (pid_t)syscall(SYS_gettid);
  /* A live heap past 64 KiB before the stage: a profiler that starts a thread of its own at that
   * point (heaprec's peak watch) does it now, not inside the staged malloc. */
  void* held = opaque(malloc(200000));
  sleep_ms(50);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = allocating_handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, NULL);

  /* A full pipe as stderr, unbuffered: malloc_stats' first write blocks. */
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return 64;
  char fill[4096];
  memset(fill, 'x', sizeof fill);
  while (write(g_pipe[1], fill, sizeof fill) > 0) {
  }
  if (fcntl(g_pipe[1], F_SETFL, 0) != 0) return 64;
  FILE* full = fdopen(g_pipe[1], "w");
  if (full == NULL) return 64;
  setvbuf(full, NULL, _IONBF, 0);
  FILE* saved_stderr = stderr;
  stderr = full;

  pthread_t watcher, holder;
  if (pthread_create(&watcher, NULL, watch, NULL) != 0) return 64;
  if (pthread_create(&holder, NULL, hold_the_arena, NULL) != 0) return 64;
  while (atomic_load(&g_holder_tid) == 0 || !in_syscall(atomic_load(&g_holder_tid), SYS_write)) {
    sleep_ms(1);
  }

  void* block = opaque(malloc(100000)); /* waits for the arena the holder has locked */
  free(block);
  free(held);
  pthread_join(holder, NULL);
  pthread_join(watcher, NULL);
  stderr = saved_stderr;
  fclose(full);
  close(g_pipe[0]);
  printf("%s\n", atomic_load(&g_verdict) == 2 ? "signal deferred until malloc returned"
                                              : "handler ran inside malloc");
  return 0;
}
