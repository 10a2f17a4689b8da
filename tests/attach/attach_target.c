// The program tests/attach/attach_test.sh attaches to: started plainly (no heaprec), it allocates
// blocks before the attach (1000 of 4 KiB, 3 of 1 MiB, which glibc mmaps), says "ready PID", waits
// as its mode says, then on the test's "go" allocates 2000 blocks of 64 KiB at after_attach_site,
// frees the early blocks, checks every block it wrote and prints what it counted; on "end" (or EOF)
// it exits with status 7.
//
//   read       waits in read() on stdin (fgets)
//   sleep      waits in nanosleep until the file GO_FILE exists, then reads stdin
//   spin       computes in registers (never in a system call) until the file GO_FILE exists,
//              checking that its registers hold what it computed, then reads stdin
//   restart    unless GO_FILE exists, sleeps in one nanosleep of 10 minutes that only the test's
//              SIGUSR1 ends (a stop continues it as restart_syscall), and says if it ended
//              otherwise; then reads stdin
//   futex      the same in a futex wait with a timeout (FUTEX_WAIT, as a lock's slow path)
//   condwait   an idle server: the main thread waits in pthread_join for a thread that waits in
//              pthread_cond_wait, on a process-shared condition variable that a child process
//              signals once GO_FILE exists; then reads stdin
//   mainexit   the main thread ends (pthread_exit) after starting one that reads stdin and exits
//   threads    8 threads allocate, check and free blocks all along (busy), main waits in read()
//   forkexec   after "go", forks and execs /bin/echo, waits for it
//   seccomp    one thread enters strict seccomp and blocks in read() on a pipe
//   fdfull     before "ready", sets its descriptor limit to 64 (hard 4096) and opens /dev/null
//              until every number below it is taken; after "go" tries one more open and prints
//              what came of it and its soft limit (a descriptor leak, as operators attach to)
//   bigheap    for bench/attach_cost.py: as read, with 204,800 more blocks of 4 KiB (800 MiB)
//              allocated before the attach and kept
//   churn      for bench/attach_cost.py: after "go", 3,000,000 malloc/free pairs (16 B-64 KiB,
//              random order, 4096 live), then prints the CPU time the thread took ("cpu_us N")
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kThreads = 8, kBefore = 1000, kLargeBefore = 3, kAfter = 2000 };
static atomic_int g_stop;
static atomic_long g_made, g_freed, g_bad;

__attribute__((noinline)) void* after_attach_site(size_t n) { return malloc(n); }
__attribute__((noinline)) void* thread_site(size_t n) { return malloc(n); }

static void* Churn(void* arg) {
  unsigned seed = (unsigned)(size_t)arg;
  void* held[64] = {0};
  size_t sizes[64] = {0};
  while (!atomic_load(&g_stop)) {
    int i = rand_r(&seed) % 64;
    if (held[i] != NULL) {
      unsigned char* p = held[i];
      for (size_t k = 0; k < sizes[i]; k += 97) g_bad += p[k] != (unsigned char)(sizes[i] + i);
      free(held[i]);
      g_freed++;
    }
    sizes[i] = 16 + rand_r(&seed) % 8192;
    held[i] = thread_site(sizes[i]);
    memset(held[i], (int)(sizes[i] + i), sizes[i]);
    g_made++;
  }
  for (int i = 0; i < 64; i++) {
    if (held[i] != NULL) {
      free(held[i]);
      g_freed++;
    }
  }
  return NULL;
}

static int g_pipe[2];
static void* Strict(void* arg) {
  (void)arg;
  char c;
  prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT);
  read(g_pipe[0], &c, 1);  // forever: nothing is written
  syscall(SYS_exit, 0);
  return NULL;
}

// The churning thread's own CPU time: heaprec's threads' (the dump thread's) are not the churn's.
static long CpuMicroseconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static int Churned(void) {
  enum { kLive = 4096 };
  static void* live[kLive];
  unsigned seed = 12345;
  long start = CpuMicroseconds();
  for (int i = 0; i < 3000000; i++) {
    int slot = rand_r(&seed) % kLive;
    free(live[slot]);
    live[slot] = malloc(16 + (size_t)(rand_r(&seed) % 65520));
  }
  printf("cpu_us %ld\n", CpuMicroseconds() - start);
  fflush(stdout);
  return 0;
}

// Two series that stay in registers, y exactly twice x (halving and adding are exact in binary
// floating point); an attach that put a register back wrong shows as "spin bad".
__attribute__((noinline)) static void Spin(const char* go) {
  // And an alternate signal stack, which a restore from a signal frame could change.
  static char alternate[64 * 1024];
  stack_t mine = {.ss_sp = alternate, .ss_size = sizeof alternate, .ss_flags = 0}, now;
  sigaltstack(&mine, NULL);
  double x = 1.0, y = 2.0;
  unsigned long steps = 0, bad = 0;
  for (;;) {
    x = x * 0.5 + 1.0 + (double)(steps & 7);
    y = y * 0.5 + 2.0 + 2.0 * (double)(steps & 7);
    if (y != 2.0 * x) ++bad;
    if ((++steps & 0xfffff) == 0 && (go == NULL || access(go, F_OK) == 0)) break;
  }
  sigaltstack(NULL, &now);
  printf("spin bad %lu altstack kept %d\n", bad, now.ss_sp == alternate && now.ss_flags == 0);
}

static volatile sig_atomic_t g_woken;
static void Wake(int signal_number) {
  (void)signal_number;
  g_woken = 1;
}

// One long wait, which only SIGUSR1 may end: anything else (a return of its own, another error) is
// printed, and a run without heaprec prints nothing (it skips the wait).
static void WaitForTheSignal(const char* mode, const char* go) {
  if (go == NULL || access(go, F_OK) == 0) return;
  struct sigaction wake = {.sa_handler = Wake};  // no SA_RESTART: the wait ends with EINTR
  sigaction(SIGUSR1, &wake, NULL);
  struct timespec ten_minutes = {600, 0};
  static int word;
  long result = strcmp(mode, "futex") == 0
                    ? syscall(SYS_futex, &word, FUTEX_WAIT, 0, &ten_minutes, NULL, 0)
                    : nanosleep(&ten_minutes, NULL);
  if (result != -1 || errno != EINTR || !g_woken) {
    printf("the wait ended early: %ld errno %d woken %d\n", result, errno, (int)g_woken);
  }
}

static struct Event {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int happened;
} * g_event;

static void* AwaitEvent(void* arg) {
  (void)arg;
  pthread_mutex_lock(&g_event->mutex);
  while (!g_event->happened) pthread_cond_wait(&g_event->cond, &g_event->mutex);
  pthread_mutex_unlock(&g_event->mutex);
  return NULL;
}

// The main thread in pthread_join, the other in pthread_cond_wait: waits for events, which glibc
// makes with FUTEX_WAIT_BITSET (a lock's with FUTEX_WAIT).
static int WaitInJoin(const char* go) {
  g_event = mmap(NULL, sizeof *g_event, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (g_event == MAP_FAILED) return 6;
  pthread_mutexattr_t mutex_shared;
  pthread_mutexattr_init(&mutex_shared);
  pthread_mutexattr_setpshared(&mutex_shared, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&g_event->mutex, &mutex_shared);
  pthread_condattr_t cond_shared;
  pthread_condattr_init(&cond_shared);
  pthread_condattr_setpshared(&cond_shared, PTHREAD_PROCESS_SHARED);
  pthread_cond_init(&g_event->cond, &cond_shared);
  const pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    // Gone with the target (a failed test kills it): not left polling for a file that never comes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    while (go != NULL && access(go, F_OK) != 0) {
      struct timespec t = {0, 5000000};
      nanosleep(&t, NULL);
    }
    pthread_mutex_lock(&g_event->mutex);
    g_event->happened = 1;
    pthread_cond_broadcast(&g_event->cond);
    pthread_mutex_unlock(&g_event->mutex);
    _exit(0);
  }
  pthread_t waiter;
  if (child < 0 || pthread_create(&waiter, NULL, AwaitEvent, NULL) != 0) return 6;
  pthread_join(waiter, NULL);
  waitpid(child, NULL, 0);
  return 0;
}

static void* ReadThenExit(void* arg) {
  (void)arg;
  char line[64];
  while (fgets(line, sizeof line, stdin) != NULL) {
  }
  exit(7);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "read";
  void* before[kBefore];
  for (int i = 0; i < kBefore; i++) before[i] = malloc(4096);
  void* large_before[kLargeBefore];
  for (int i = 0; i < kLargeBefore; i++) {
    large_before[i] = malloc(1 << 20);
    ((volatile char*)large_before[i])[0] = 1;  // used: the compiler keeps the allocation
  }
  pthread_t threads[kThreads];
  int threaded = strcmp(mode, "threads") == 0;
  if (threaded) {
    for (int i = 0; i < kThreads; i++)
      pthread_create(&threads[i], NULL, Churn, (void*)(size_t)(i + 1));
  }
  if (strcmp(mode, "seccomp") == 0) {
    pthread_t t;
    if (pipe(g_pipe) != 0 || pthread_create(&t, NULL, Strict, NULL) != 0) return 2;
  }
  if (strcmp(mode, "bigheap") == 0) {
    for (int i = 0; i < 204800; i++) {
      char* block = malloc(4096);
      if (block != NULL) block[0] = 1;  // kept, never freed: the heap an operator attaches for
    }
  }
  int fdfull = strcmp(mode, "fdfull") == 0;
  if (fdfull) {
    struct rlimit limit = {64, 4096};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 4;
    while (open("/dev/null", O_RDONLY) >= 0) {
    }
    if (errno != EMFILE) return 5;
  }
  printf("ready %d\n", getpid());
  fflush(stdout);
  if (strcmp(mode, "sleep") == 0) {
    const char* go = getenv("GO_FILE");
    while (go != NULL && access(go, F_OK) != 0) {
      struct timespec t = {0, 5000000};
      nanosleep(&t, NULL);
    }
  }
  if (strcmp(mode, "mainexit") == 0) {
    pthread_t reader;
    if (pthread_create(&reader, NULL, ReadThenExit, NULL) != 0) return 6;
    pthread_exit(NULL);
  }
  if (strcmp(mode, "spin") == 0) Spin(getenv("GO_FILE"));
  if (strcmp(mode, "condwait") == 0 && WaitInJoin(getenv("GO_FILE")) != 0) return 6;
  if (strcmp(mode, "restart") == 0 || strcmp(mode, "futex") == 0) {
    WaitForTheSignal(mode, getenv("GO_FILE"));
  }
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL) return 3;
  if (strcmp(mode, "churn") == 0) return Churned();
  if (strcmp(mode, "forkexec") == 0) {
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/echo", "echo", "child ran", (char*)NULL);
      _exit(127);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child status %d\n", WEXITSTATUS(status));
  }
  void* after[kAfter];
  long sum = 0;
  for (int i = 0; i < kAfter; i++) {
    after[i] = after_attach_site(64 * 1024);
    memset(after[i], i & 0x7f, 64 * 1024);
  }
  for (int i = 0; i < kBefore; i++) free(before[i]);
  for (int i = 0; i < kLargeBefore; i++) free(large_before[i]);
  for (int i = 0; i < kAfter; i++) sum += ((unsigned char*)after[i])[65535];
  if (fdfull) {
    struct rlimit limit;
    int fd = open("/dev/null", O_RDONLY);
    int error = errno;
    getrlimit(RLIMIT_NOFILE, &limit);
    printf("one more open: %d (%s), soft limit %ld\n", fd, fd < 0 ? strerrorname_np(error) : "-",
           (long)limit.rlim_cur);
  }
  printf("sum %ld\n", sum);
  fflush(stdout);
  if (fgets(line, sizeof line, stdin) == NULL) line[0] = '\0';
  if (threaded) {
    atomic_store(&g_stop, 1);
    for (int i = 0; i < kThreads; i++) pthread_join(threads[i], NULL);
    printf("threads balanced %d bad %ld\n", g_made == g_freed, (long)g_bad);
  }
  return 7;
}
