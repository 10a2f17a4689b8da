// Every way a process can end, each after allocating a known amount at a known site, for
// endings_test.cc, peak_test.cc (peak, peak-oom, above) and dumps_test.cc (usr2-*, exec-*). C++ for
// the uncaught exception; C-style otherwise.
//
// Endings (each allocates 40 x 1000 bytes at site_ending first, says "before MODE" and flushes):
//   rel_endings exit            exit(3)
//   rel_endings _exit           _exit(7)
//   rel_endings _Exit           _Exit(8)
//   rel_endings abort           abort(): SIGABRT
//   rel_endings throw           an uncaught std::runtime_error: std::terminate, SIGABRT
//   rel_endings assert          a failed assert(): its message, SIGABRT
//   rel_endings segv            a write through a null pointer: SIGSEGV
//   rel_endings bus             a write to a page of an empty memfd mapping: SIGBUS
//   rel_endings fpe             integer division by zero (volatile operands): SIGFPE
//   rel_endings ill             __builtin_trap (ud2): SIGILL
//   rel_endings raise-int       raise(SIGINT)
//   rel_endings sleep           says "ready PID", then sleeps until a signal ends it
//   rel_endings term-sigaction  | the program's own SIGTERM handler, installed with sigaction or
//   rel_endings term-signal     | signal() in main (after heaprec started) or from the executable's
//   rel_endings term-sigaction-early | .preinit_array (before any library's constructor, so
//   rel_endings term-signal-early    | before heaprec's): says "ready PID", sleeps; on SIGTERM
//                               the handler says "handled SIGTERM" and calls exit(7)
//   rel_endings fork-_exit      forks a child (Python multiprocessing style) that allocates
//                               30 x 700 bytes at site_child and leaves with _exit(5); the parent
//                               waits, says "child exited 5", returns 0
//   rel_endings vfork           vfork()s a child that leaves with _exit(6) at once; the parent
//                               says "child exited 6", returns 0
//
// Running programs the test drives (stdin is a pipe from the test; "ready PID" on stdout):
//   rel_endings peak [exit]     2000 x 32 KiB at site_peak, "ready PID", then sleeps until killed
//                               (with "exit": returns 0 instead)
//   rel_endings peak-oom        2000 x 32 KiB at site_peak, "ready PID", waits for a line on
//                               stdin; then caps its address space (RLIMIT_AS) at what it maps
//                               now, allocates until malloc fails, says "out of memory" and
//                               aborts: the final dump finds no new memory
//   rel_endings above N         grows site_above in three steps, each ending just past a
//                               multiple of N: up to k N - N/16 in blocks of N/64, then one block
//                               of N/8 (so site_above holds k N + N/16 as the live heap crosses
//                               k N), says "grown k" and waits for a line on stdin; then grows to
//                               3.5 N, says "done" and returns 0
//   rel_endings usr2-handler    installs its own SIGUSR2 handler (a counter) with sigaction, says
//                               "ready PID", then says "handled K" for each signal handled; after
//                               the third, waits for a line on stdin, says "count=N", returns 0
//   rel_endings usr2-ignore     sets SIGUSR2 to SIG_IGN, says "ready PID", waits for a line on
//                               stdin, says "alive", returns 0
//   rel_endings exec-first      10 x 1000 bytes at site_first, "first ready PID", waits for a
//                               line on stdin, then execs itself (same pid) as exec-second
//   rel_endings exec-second     10 x 2000 bytes at site_second, "second ready PID", waits for a
//                               line on stdin, returns 0
//   rel_endings exec-after-peak 64 x 32 KiB at site_peak, then at once execs itself (same pid)
//                               as exec-done, which says "done PID" and returns 0
#undef NDEBUG  // the assert mode needs assert(), whatever the build type
#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace {

__attribute__((noinline)) void* Opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

// A line on stdout, flushed at once: the program may die right after it.
__attribute__((format(printf, 1, 2))) void Say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vprintf(format, args);
  va_end(args);
  putchar('\n');
  fflush(stdout);
}

void* g_live[4096];  // everything the sites allocate stays live, reachable from here
int g_live_count = 0;

void Keep(void* p) {
  if (p == nullptr || g_live_count == 4096) abort();
  g_live[g_live_count++] = p;
}

// Waits for one line from the test on stdin.
void AwaitLine() {
  char line[64];
  if (fgets(line, sizeof(line), stdin) == nullptr) {
    Say("stdin: %s", feof(stdin) ? "end of file" : strerror(errno));
    exit(70);
  }
}

[[noreturn]] void SleepForever() {
  for (;;) pause();
}

volatile sig_atomic_t g_handled = 0;

void CountSignal(int) { g_handled = g_handled + 1; }

void TermHandler(int) {
  static const char kText[] = "handled SIGTERM\n";
  ssize_t ignored = write(STDOUT_FILENO, kText, sizeof(kText) - 1);
  (void)ignored;
  exit(7);
}

void InstallTermHandler(bool with_sigaction) {
  if (with_sigaction) {
    struct sigaction action = {};
    action.sa_handler = TermHandler;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGTERM, &action, nullptr) != 0) abort();
  } else if (signal(SIGTERM, TermHandler) == SIG_ERR) {
    abort();
  }
}

// Runs before every shared library's constructor (heaprec's included): the "-early" modes install
// their handler here.
void EarlyInit(int argc, char** argv, char**) {
  if (argc < 2) return;
  if (strcmp(argv[1], "term-sigaction-early") == 0) InstallTermHandler(true);
  if (strcmp(argv[1], "term-signal-early") == 0) InstallTermHandler(false);
}
__attribute__((section(".preinit_array"), used)) void (*const g_early_init)(int, char**,
                                                                            char**) = EarlyInit;

int Ready(const char* what = "ready") {
  Say("%s %d", what, static_cast<int>(getpid()));
  return 0;
}

}  // namespace

extern "C" {

__attribute__((noinline)) void site_ending(int count, size_t size) {
  for (int i = 0; i < count; ++i) Keep(Opaque(malloc(size)));
}
__attribute__((noinline)) void site_child(int count, size_t size) {
  for (int i = 0; i < count; ++i) Keep(Opaque(malloc(size)));
}
__attribute__((noinline)) void site_peak(int count, size_t size) {
  for (int i = 0; i < count; ++i) Keep(Opaque(malloc(size)));
}
__attribute__((noinline)) void site_above(int count, size_t size) {
  for (int i = 0; i < count; ++i) Keep(Opaque(malloc(size)));
}
__attribute__((noinline)) void site_first(int count, size_t size) {
  for (int i = 0; i < count; ++i) Keep(Opaque(malloc(size)));
}
__attribute__((noinline)) void site_second(int count, size_t size) {
  for (int i = 0; i < count; ++i) Keep(Opaque(malloc(size)));
}

}  // extern "C"

namespace {

int Peak(bool then_exit) {
  site_peak(2000, 32 * 1024);
  Ready();
  if (then_exit) return 0;
  SleepForever();
}

// The address space mapped now, from /proc/self/statm (pages).
rlim_t MappedBytes() {
  FILE* statm = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (statm == nullptr || fscanf(statm, "%lu", &pages) != 1) abort();
  fclose(statm);
  return static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

int PeakThenOutOfMemory() {
  site_peak(2000, 32 * 1024);
  Ready();
  AwaitLine();
  struct rlimit cap = {MappedBytes(), RLIM_INFINITY};
  if (setrlimit(RLIMIT_AS, &cap) != 0) return 65;
  while (Opaque(malloc(64 * 1024)) != nullptr) {
  }
  Say("out of memory");
  abort();
}

int Above(long n) {
  if (n < 1024 || n % 64 != 0) return 64;
  long held = 0;  // bytes at site_above
  for (int k = 1; k <= 3; ++k) {
    long below = k * n - n / 16;
    int blocks = static_cast<int>((below - held) / (n / 64));
    site_above(blocks, n / 64);
    held += blocks * (n / 64);
    site_above(1, n / 8);
    held += n / 8;
    Say("grown %d", k);
    AwaitLine();
  }
  int blocks = static_cast<int>((3 * n + n / 2 - held) / (n / 64));
  site_above(blocks, n / 64);
  Say("done");
  return 0;
}

int Usr2Handler() {
  sigset_t usr2, old;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  sigprocmask(SIG_BLOCK, &usr2, &old);  // handled only inside sigsuspend: no signal is missed
  struct sigaction action = {};
  action.sa_handler = CountSignal;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGUSR2, &action, nullptr) != 0) abort();
  Ready();
  for (int seen = 0; seen < 3;) {
    sigsuspend(&old);
    while (seen < g_handled) Say("handled %d", ++seen);
  }
  AwaitLine();
  Say("count=%d", static_cast<int>(g_handled));
  return 0;
}

int Usr2Ignore() {
  if (signal(SIGUSR2, SIG_IGN) == SIG_ERR) abort();
  Ready();
  AwaitLine();
  Say("alive");
  return 0;
}

int ForkUnderscoreExit() {
  pid_t child = fork();
  if (child < 0) return 71;
  if (child == 0) {
    site_child(30, 700);
    _exit(5);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 72;
  Say("child exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

int VforkUnderscoreExit() {
  pid_t child = vfork();
  if (child < 0) return 71;
  if (child == 0) _exit(6);
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 72;
  Say("child exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}

int ExecFirst() {
  site_first(10, 1000);
  Ready("first ready");
  AwaitLine();
  char* argv[] = {const_cast<char*>("rel_endings"), const_cast<char*>("exec-second"), nullptr};
  execv("/proc/self/exe", argv);
  Say("execv: %s", strerror(errno));
  return 73;
}

int ExecAfterPeak() {
  site_peak(64, 32 * 1024);
  char* argv[] = {const_cast<char*>("rel_endings"), const_cast<char*>("exec-done"), nullptr};
  execv("/proc/self/exe", argv);
  Say("execv: %s", strerror(errno));
  return 73;
}

int ExecSecond() {
  site_second(10, 2000);
  Ready("second ready");
  AwaitLine();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const char* mode = argv[1];
  if (strcmp(mode, "peak") == 0) return Peak(argc > 2 && strcmp(argv[2], "exit") == 0);
  if (strcmp(mode, "peak-oom") == 0) return PeakThenOutOfMemory();
  if (strcmp(mode, "above") == 0) return argc > 2 ? Above(strtol(argv[2], nullptr, 10)) : 64;
  if (strcmp(mode, "usr2-handler") == 0) return Usr2Handler();
  if (strcmp(mode, "usr2-ignore") == 0) return Usr2Ignore();
  if (strcmp(mode, "exec-first") == 0) return ExecFirst();
  if (strcmp(mode, "exec-second") == 0) return ExecSecond();
  if (strcmp(mode, "exec-after-peak") == 0) return ExecAfterPeak();
  if (strcmp(mode, "exec-done") == 0) {
    Ready("done");
    return 0;
  }

  site_ending(40, 1000);
  if (strcmp(mode, "fork-_exit") == 0) return ForkUnderscoreExit();
  if (strcmp(mode, "vfork") == 0) return VforkUnderscoreExit();
  if (strcmp(mode, "term-sigaction") == 0) InstallTermHandler(true);
  if (strcmp(mode, "term-signal") == 0) InstallTermHandler(false);
  if (strncmp(mode, "term-", 5) == 0) {
    // SIGTERM blocked until the program waits for it: the handler's exit() must not interrupt
    // the flush of "ready" (exit would flush the same line again).
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    Ready();
    for (;;) sigsuspend(&old);
  }
  if (strcmp(mode, "sleep") == 0) {
    Ready();
    SleepForever();
  }
  Say("before %s", mode);
  if (strcmp(mode, "exit") == 0) exit(3);
  if (strcmp(mode, "_exit") == 0) _exit(7);
  if (strcmp(mode, "_Exit") == 0) _Exit(8);
  if (strcmp(mode, "abort") == 0) abort();
  if (strcmp(mode, "throw") == 0) throw std::runtime_error("uncaught");
  if (strcmp(mode, "assert") == 0) assert(argc == 1000 && "the failing assertion");
  if (strcmp(mode, "segv") == 0) {
    int* volatile null = nullptr;
    *null = 1;
  }
  if (strcmp(mode, "bus") == 0) {
    int fd = memfd_create("rel_endings", 0);  // empty: no page of the mapping is backed
    if (fd < 0) return 74;
    auto* page =
        static_cast<volatile char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (page == MAP_FAILED) return 75;
    page[0] = 1;
  }
  if (strcmp(mode, "fpe") == 0) {
    volatile int numerator = 1, denominator = 0;
    Say("%d", numerator / denominator);
  }
  if (strcmp(mode, "ill") == 0) __builtin_trap();
  if (strcmp(mode, "raise-int") == 0) raise(SIGINT);
  Say("still running after %s", mode);
  return 65;
}
