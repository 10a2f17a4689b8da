/* The edges of a process's life: memory allocated before heaprec started (by rel_early's
 * constructor) and freed while it runs or after its final dump; memory freed by static destructors
 * and by atexit handlers registered late, including one registered from inside another atexit
 * handler; exit() from a non-main thread while other threads allocate. (_exit, abort and the other
 * endings: rel_endings.cc.)
 *
 *   rel_lifecycle atexit        the above, then returns 0 from main
 *   rel_lifecycle thread-exit   4 threads churn malloc/free; another thread calls exit(5)
 *
 * Prints deterministic lines only (from main, the handlers and the destructors). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char* rel_early_text(void);
void rel_early_free_some(void);

__attribute__((noinline)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

static void* g_for_destructor[50];
static void* g_for_handler_a[50];
static void* g_for_handler_b[50];

__attribute__((noinline)) void site_lifecycle_live(void** slots, size_t size) {
  for (int i = 0; i < 50; ++i) {
    slots[i] = opaque(malloc(size));
    if (slots[i] == NULL) abort();
  }
}

static void free_all(void** slots) {
  for (int i = 0; i < 50; ++i) {
    free(slots[i]);
    slots[i] = NULL;
  }
}

static void handler_b(void) {
  free_all(g_for_handler_b);
  /* Allocates and frees at the very end, after most of the runtime is gone. */
  void* last = opaque(malloc(123));
  free(last);
  printf("atexit handler b\n");
}

static void handler_a(void) {
  free_all(g_for_handler_a);
  atexit(handler_b); /* registered while exit handlers run: glibc runs it next */
  printf("atexit handler a\n");
}

__attribute__((destructor)) static void program_destructor(void) {
  free_all(g_for_destructor);
  /* stdout may already be flushed and closed here: say nothing. */
}

static int atexit_mode(void) {
  printf("early: %s\n", rel_early_text());
  rel_early_free_some();
  site_lifecycle_live(g_for_destructor, 1100);
  site_lifecycle_live(g_for_handler_a, 1200);
  site_lifecycle_live(g_for_handler_b, 1300);
  atexit(handler_a); /* registered late, just before main returns */
  printf("main returns\n");
  return 0;
}

static atomic_int g_started;

static uint32_t next_random(uint32_t* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}

static void* churn(void* arg) {
  uint32_t seed = (uint32_t)(uintptr_t)arg;
  void* held[32] = {0};
  atomic_fetch_add(&g_started, 1);
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      free(held[i]);
      held[i] = opaque(malloc(1 + next_random(&seed) % 3000));
    }
  }
  return NULL;
}

static void* exiter(void* arg) {
  (void)arg;
  while (atomic_load(&g_started) < 4) sched_yield();
  site_lifecycle_live(g_for_handler_a, 1400);
  printf("exit from a thread\n");
  exit(5);
}

static int thread_exit_mode(void) {
  pthread_t threads[5];
  for (int t = 0; t < 4; ++t) pthread_create(&threads[t], NULL, churn, (void*)(uintptr_t)(t + 1));
  pthread_create(&threads[4], NULL, exiter, NULL);
  pthread_join(threads[4], NULL); /* never returns: the process exits first */
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  if (strcmp(argv[1], "atexit") == 0) return atexit_mode();
  if (strcmp(argv[1], "thread-exit") == 0) return thread_exit_mode();
  return 64;
}
