// Many threads: blocks allocated in one thread and freed in another, threads that exit while
// blocks they allocated (and heaprec sampled) are still live, and thread_local objects whose
// destructors free memory when their thread ends.
//
//   rel_threads N      (N threads, all alive at once; default 300)
//
// Thread t, phase 1: 20 blocks of 100 + t bytes at site_cross_alloc; 3 blocks of 2000 bytes at
// site_thread_held, handed to main; 10 x new char[500] at site_tls_alloc, owned by a thread_local
// object whose destructor deletes them. Barrier. Phase 2: thread t frees the 20 blocks of thread
// (t + 1) % N, then exits. After joining, main frees the held blocks of even-numbered threads (the
// odd ones' stay live) and exits through main's own thread_local object (10 more site_tls_alloc).
//
// Exact-mode answer: site_cross_alloc live 0; site_thread_held live (N / 2) x 3 x 2000 when N is
// even; site_tls_alloc allocated (N + 1) x 10 x 500, live 0. Prints one line.
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

__attribute__((noinline)) void* Opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

struct ThreadLocalBlocks {
  char* blocks[10] = {};
  int count = 0;
  ~ThreadLocalBlocks() {
    for (int i = 0; i < count; ++i) delete[] blocks[i];
  }
};

thread_local ThreadLocalBlocks t_blocks;

int g_threads = 0;
void*** g_cross = nullptr;  // [thread][20]
void** g_held = nullptr;    // [thread * 3 + i]
pthread_barrier_t g_barrier;
std::atomic<long> g_tls_destroyed{0};

}  // namespace

extern "C" __attribute__((noinline)) void site_cross_alloc(int t) {
  for (int i = 0; i < 20; ++i) {
    g_cross[t][i] = Opaque(malloc(100 + static_cast<size_t>(t)));
    if (g_cross[t][i] == nullptr) abort();
  }
}

extern "C" __attribute__((noinline)) void site_thread_held(int t) {
  for (int i = 0; i < 3; ++i) {
    g_held[t * 3 + i] = Opaque(malloc(2000));
    if (g_held[t * 3 + i] == nullptr) abort();
  }
}

extern "C" __attribute__((noinline)) void site_tls_alloc() {
  for (int i = 0; i < 10; ++i) {
    t_blocks.blocks[t_blocks.count++] = static_cast<char*>(Opaque(new char[500]));
    memset(t_blocks.blocks[i], 1, 500);
  }
}

static void* Worker(void* arg) {
  const int t = static_cast<int>(reinterpret_cast<long>(arg));
  site_cross_alloc(t);
  site_thread_held(t);
  site_tls_alloc();
  pthread_barrier_wait(&g_barrier);
  const int victim = (t + 1) % g_threads;
  for (int i = 0; i < 20; ++i) free(g_cross[victim][i]);
  return nullptr;
}

int main(int argc, char** argv) {
  g_threads = argc > 1 ? atoi(argv[1]) : 300;
  if (g_threads < 2) return 64;
  // Bookkeeping arrays are allocated once and never freed: they are not at any site above.
  g_cross = static_cast<void***>(calloc(static_cast<size_t>(g_threads), sizeof(void**)));
  for (int t = 0; t < g_threads; ++t) g_cross[t] = static_cast<void**>(calloc(20, sizeof(void*)));
  g_held = static_cast<void**>(calloc(static_cast<size_t>(g_threads) * 3, sizeof(void*)));
  pthread_barrier_init(&g_barrier, nullptr, static_cast<unsigned>(g_threads));
  std::vector<pthread_t> threads(static_cast<size_t>(g_threads));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (int t = 0; t < g_threads; ++t) {
    int rc = pthread_create(&threads[static_cast<size_t>(t)], &attr, Worker,
                            reinterpret_cast<void*>(static_cast<long>(t)));
    if (rc != 0) {
      fprintf(stderr, "pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  for (pthread_t& thread : threads) pthread_join(thread, nullptr);
  for (int t = 0; t < g_threads; t += 2) {
    for (int i = 0; i < 3; ++i) free(g_held[t * 3 + i]);
  }
  site_tls_alloc();  // main's own thread_local object, destroyed by exit()
  printf("threads=%d joined\n", g_threads);
  return 0;
}
