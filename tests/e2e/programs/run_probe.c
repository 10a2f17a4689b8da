// The program run_signals_test.cc runs with and without `heaprec run`: each mode shows one thing
// heaprec must leave as it found it (signal state, descriptors) or must report (how it ended).
//
//   run_probe sleep                  prints "ready PID", then sleeps 30 s (ended by a signal)
//   run_probe count-sigint           prints "ready PID", waits for SIGINT, then 0.5 s more for a
//                                    duplicate, and prints how many arrived
//   run_probe sigstate               prints its SigIgn and SigBlk lines of /proc/self/status
//   run_probe fds [FILE]             prints "N -> target" for each open descriptor (to FILE,
//                                    opened only once the list is made, or stdout)
//   run_probe segv                   dies of a real SIGSEGV
//   run_probe exit N                 exits with status N
//   run_probe peak BYTES             allocates BYTES in 64 KiB blocks, frees them all, exits 0
//   run_probe manifest REASON TEXT N appends "pid<TAB>REASON<TAB>TEXT" N times to
//                                    $HEAPREC_MANIFEST, standing in for the library
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void Ready(void) {
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
}

// Sleeps the whole `seconds`, even across handled signals.
static void SleepFully(double seconds) {
  struct timespec left = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  while (nanosleep(&left, &left) != 0) {
  }
}

static int Sleep(void) {
  Ready();
  SleepFully(30);
  return 0;
}

static volatile sig_atomic_t g_sigints = 0;

static void CountSigint(int signal_number) {
  (void)signal_number;
  ++g_sigints;
}

// A terminal's Ctrl-C must arrive once: heaprec must not pass on what the terminal already sent to
// the whole process group.
static int CountSigints(void) {
  struct sigaction count = {0};
  count.sa_handler = CountSigint;
  sigemptyset(&count.sa_mask);
  sigaction(SIGINT, &count, NULL);
  Ready();
  for (int waited = 0; g_sigints == 0 && waited < 3000; ++waited) usleep(10 * 1000);
  SleepFully(0.5);  // a forwarded duplicate would come within microseconds
  printf("SIGINT received %d time(s)\n", (int)g_sigints);
  return 0;
}

static int PrintSignalState(void) {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == NULL) return 1;
  char line[256];
  while (fgets(line, sizeof(line), status) != NULL) {
    if (strncmp(line, "SigIgn:", 7) == 0 || strncmp(line, "SigBlk:", 7) == 0) fputs(line, stdout);
  }
  fclose(status);
  return 0;
}

// The open descriptors, except the directory reading them, as "N -> target" lines. Listed before
// the output file is opened, which would otherwise be one of them, and without allocating
// (getdents64 into static memory rather than opendir's heap buffer): with nothing allocated there
// is nothing for heaprec to sample, so no peak profile is being written while the listing runs and
// the descriptors seen are exactly the program's own.
static int ListDescriptors(const char* output) {
  static char listing[64 * 1024];
  static char entries[32 * 1024];
  size_t used = 0;
  int directory = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory < 0) return 1;
  long n;
  while ((n = syscall(SYS_getdents64, directory, entries, sizeof(entries))) > 0) {
    for (long at = 0; at < n;) {
      struct Entry {
        unsigned long long inode;
        long long offset;
        unsigned short length;
        unsigned char type;
        char name[];
      }* entry = (struct Entry*)(entries + at);
      at += entry->length;
      if (entry->name[0] == '.' || atoi(entry->name) == directory) continue;
      char target[PATH_MAX];
      ssize_t t = readlinkat(directory, entry->name, target, sizeof(target) - 1);
      target[t < 0 ? 0 : t] = '\0';
      used += (size_t)snprintf(listing + used, sizeof(listing) - used, "%s -> %s\n", entry->name,
                               target);
      if (used >= sizeof(listing)) return 1;
    }
  }
  close(directory);
  FILE* out = output != NULL ? fopen(output, "w") : stdout;
  if (out == NULL) return 1;
  fputs(listing, out);
  return fclose(out) == 0 ? 0 : 1;
}

// The pointer itself is volatile: a null pointer the compiler can see would become a trap
// instruction (SIGILL) instead of a fault.
static int Segv(void) {
  int* volatile nowhere = NULL;
  *(volatile int*)nowhere = 1;
  return 0;
}

static int Peak(long bytes) {
  enum { kBlock = 64 * 1024 };
  long count = bytes / kBlock;
  char** blocks = malloc((size_t)count * sizeof(char*));
  if (blocks == NULL) return 1;
  for (long i = 0; i < count; ++i) {
    blocks[i] = malloc(kBlock);
    if (blocks[i] == NULL) return 1;
    memset(blocks[i], 1, kBlock);
    __asm__ volatile("" : : "r"(blocks[i]) : "memory");  // kept: the compiler may not elide it
  }
  for (long i = 0; i < count; ++i) free(blocks[i]);
  free(blocks);
  return 0;
}

static int AppendToManifest(const char* reason, const char* text, int count) {
  const char* manifest = getenv("HEAPREC_MANIFEST");
  if (manifest == NULL || manifest[0] == '\0') return 0;
  FILE* out = fopen(manifest, "a");
  if (out == NULL) return 1;
  for (int i = 0; i < count; ++i) fprintf(out, "%d\t%s\t%s\n", (int)getpid(), reason, text);
  return fclose(out) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "sleep") == 0) return Sleep();
  if (strcmp(mode, "count-sigint") == 0) return CountSigints();
  if (strcmp(mode, "sigstate") == 0) return PrintSignalState();
  if (strcmp(mode, "fds") == 0) return ListDescriptors(argc > 2 ? argv[2] : NULL);
  if (strcmp(mode, "segv") == 0) return Segv();
  if (strcmp(mode, "exit") == 0 && argc > 2) exit(atoi(argv[2]));
  if (strcmp(mode, "peak") == 0 && argc > 2) return Peak(atol(argv[2]));
  if (strcmp(mode, "manifest") == 0 && argc > 4) {
    return AppendToManifest(argv[2], argv[3], atoi(argv[4]));
  }
  fprintf(stderr, "usage: run_probe MODE [ARGS] (see the source)\n");
  return 2;
}
