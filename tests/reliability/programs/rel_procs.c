/* Process creation under the profiler: fork storms, fork while other threads are inside
 * malloc/free, fork in a loop (while interval dumps run), and exec chains through `sh -c` started
 * with fork+exec, vfork+exec or posix_spawn.
 *
 *   rel_procs storm N        forks N children in batches of 50; every 4th child forks a
 *                            grandchild. Every process allocates and frees (site_storm_*), keeps
 *                            some blocks live, and leaves with exit().
 *   rel_procs threads N      4 threads churn malloc/realloc/free without pause while the main
 *                            thread forks N children one after the other; each child allocates,
 *                            frees and exits.
 *   rel_procs loop N         forks N children one after the other, allocating between forks (meant
 *                            for --dump-interval 0.01: forks land in the middle of dumps).
 *   rel_procs pool N         the parent keeps 1000 blocks of 100 bytes (site_pool_parent), then
 *                            forks N workers one after the other; each keeps 300 blocks of 200
 *                            bytes (site_pool_worker) and exits. The parent exits once all did.
 *   rel_procs chain L METHODS
 *                            allocates (L+1) x 100 blocks of 1000+L bytes at site_chain_level,
 *                            prints one line, and for L > 0 runs `sh -c '<self> chain L-1 REST;
 *                            exit $?'`, started by METHODS[0]: 'f' fork+execl, 'v' vfork+execl,
 *                            'p' posix_spawn. Exits with the child's status.
 *
 * Output is deterministic: one summary line per mode (and per level for chain), printed by the
 * process that owns it. Exit status 0 when every child exited 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rel_common.h"

extern char** environ;

/* Allocates `count` blocks, frees every other one, and returns how many bytes stay live (the kept
 * blocks are deliberately never freed: they are what the profile should show). */
__attribute__((noinline)) long site_storm_work(uint32_t seed, int count) {
  void* blocks[64];
  long live = 0;
  if (count > 64) count = 64;
  for (int i = 0; i < count; ++i) {
    size_t size = 16 + next_random(&seed) % 4000;
    blocks[i] = opaque(checked(malloc(size)));
    memset(blocks[i], i, size < 64 ? size : 64);
    if (i % 2 == 0) live += (long)size;
  }
  for (int i = 1; i < count; i += 2) free(blocks[i]);
  return live;
}

static int wait_ok(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 0;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* fork(), with stdio flushed first so that no child prints the parent's buffered output again;
 * the process exits if it fails. */
static pid_t checked_fork(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(1);
  }
  return pid;
}

/* Forks a child that runs site_storm_work(seed, count) and exits 0; waits for it and returns 1 if
 * it did. */
static int fork_worker(uint32_t seed, int count) {
  pid_t pid = checked_fork();
  if (pid == 0) {
    site_storm_work(seed, count);
    exit(0);
  }
  return wait_ok(pid);
}

__attribute__((noinline)) void** site_pool_parent(int count) {
  void** blocks = opaque(checked(malloc(sizeof(void*) * (size_t)count)));
  for (int i = 0; i < count; ++i) blocks[i] = opaque(checked(malloc(100)));
  return blocks;
}

__attribute__((noinline)) void** site_pool_worker(int count) {
  void** blocks = opaque(checked(malloc(sizeof(void*) * (size_t)count)));
  for (int i = 0; i < count; ++i) blocks[i] = opaque(checked(malloc(200)));
  return blocks;
}

static int pool(int n) {
  void** kept = site_pool_parent(1000);
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    pid_t pid = checked_fork();
    if (pid == 0) {
      site_pool_worker(300);
      exit(0);
    }
    ok += wait_ok(pid);
  }
  opaque(kept); /* held to the end: live in the parent's exit profile */
  printf("pool workers=%d ok=%d\n", n, ok);
  return ok == n ? 0 : 1;
}

static int storm(int n) {
  int grandchildren = 0, ok = 0;
  pid_t pids[50];
  site_storm_work(1, 40);
  for (int first = 0; first < n; first += 50) {
    int batch = n - first < 50 ? n - first : 50;
    for (int i = 0; i < batch; ++i) {
      int index = first + i;
      if (index % 4 == 0) ++grandchildren;
      pid_t pid = checked_fork();
      if (pid == 0) {
        site_storm_work(100 + (uint32_t)index, 20);
        int status = 0;
        if (index % 4 == 0) {
          pid_t grandchild = fork();
          if (grandchild < 0) exit(1);
          if (grandchild == 0) {
            site_storm_work(10000 + (uint32_t)index, 10);
            exit(0);
          }
          status = wait_ok(grandchild) ? 0 : 1;
        }
        exit(status);
      }
      pids[i] = pid;
    }
    for (int i = 0; i < batch; ++i) ok += wait_ok(pids[i]);
  }
  printf("storm children=%d grandchildren=%d ok=%d\n", n, grandchildren, ok);
  return ok == n ? 0 : 1;
}

static atomic_int g_stop;
static atomic_long g_rounds;

static void* churn(void* arg) {
  uint32_t seed = (uint32_t)(uintptr_t)arg;
  void* held[32] = {0};
  while (!atomic_load(&g_stop)) {
    for (int i = 0; i < 32; ++i) {
      size_t size = 1 + next_random(&seed) % 2048;
      if (held[i] != NULL && next_random(&seed) % 3 == 0) {
        held[i] = opaque(checked(realloc(held[i], size)));
      } else {
        free(held[i]);
        held[i] = opaque(checked(malloc(size)));
      }
    }
    atomic_fetch_add(&g_rounds, 1);
  }
  for (int i = 0; i < 32; ++i) free(held[i]);
  return NULL;
}

static int fork_with_threads(int n) {
  pthread_t threads[4];
  for (int t = 0; t < 4; ++t) {
    if (pthread_create(&threads[t], NULL, churn, (void*)(uintptr_t)(t + 1)) != 0) return 1;
  }
  /* Make sure the threads are churning before the first fork. */
  while (atomic_load(&g_rounds) < 100) sched_yield();
  int ok = 0;
  /* Each child has only the forking thread: locks the churning threads held at fork time must not
   * stay held there. */
  for (int i = 0; i < n; ++i) ok += fork_worker(500 + (uint32_t)i, 30);
  atomic_store(&g_stop, 1);
  for (int t = 0; t < 4; ++t) pthread_join(threads[t], NULL);
  printf("threads forks=%d ok=%d\n", n, ok);
  return ok == n ? 0 : 1;
}

static int fork_loop(int n) {
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    site_storm_work(700 + (uint32_t)i, 20);
    ok += fork_worker(900 + (uint32_t)i, 10);
  }
  printf("loop forks=%d ok=%d\n", n, ok);
  return ok == n ? 0 : 1;
}

__attribute__((noinline)) void site_chain_level(int level) {
  for (int i = 0; i < (level + 1) * 100; ++i) opaque(checked(malloc(1000 + (size_t)level)));
}

static int chain(const char* self, int level, const char* methods) {
  site_chain_level(level);
  printf("chain level=%d methods=%s\n", level, methods);
  fflush(stdout);
  if (level == 0) return 0;
  if (methods[0] == '\0') return 64;
  char command[4096];
  snprintf(command, sizeof command, "'%s' chain %d '%s'; exit $?", self, level - 1, methods + 1);
  pid_t pid = -1;
  switch (methods[0]) {
    case 'f':
      pid = fork();
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", command, (char*)NULL);
        _exit(127);
      }
      break;
    case 'v':
      pid = vfork();
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", command, (char*)NULL);
        _exit(127);
      }
      break;
    case 'p': {
      char* argv[] = {"sh", "-c", command, NULL};
      int rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
      if (rc != 0) pid = -1;
      break;
    }
    default:
      return 64;
  }
  if (pid < 0) {
    perror("start");
    return 1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  int n = atoi(argv[2]);
  if (strcmp(argv[1], "storm") == 0) return storm(n);
  if (strcmp(argv[1], "threads") == 0) return fork_with_threads(n);
  if (strcmp(argv[1], "loop") == 0) return fork_loop(n);
  if (strcmp(argv[1], "pool") == 0) return pool(n);
  if (strcmp(argv[1], "chain") == 0 && argc >= 4) return chain(argv[0], n, argv[3]);
  return 64;
}
