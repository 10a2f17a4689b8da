// Multi-threaded malloc stress: the worst case for an allocation interposer.
//
//   malloc_stress [THREADS [OPS_PER_THREAD [WINDOW]]]     (defaults 4, 6000000, 4096)
//
// Each thread keeps a sliding window of WINDOW live blocks. Every operation picks a random slot,
// releases the block in it and puts a new one of a random size there (60% 16-256 B,
// 30% 256 B-4 KiB, 9% 4-32 KiB, 1% 32-64 KiB; all below glibc's mmap threshold, so every call is a
// heap call). One block in 16 is not freed by its own thread but handed to the next thread through
// a lock-free ring, and freed there (the cross-thread free path). Fixed seeds: every run does the
// same work.
// Prints one line with the operation count and a checksum.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

struct Rng {  // xorshift64*: fast, deterministic per seed
  std::uint64_t s;
  std::uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
};

// Single-producer single-consumer ring: thread i hands blocks to thread (i+1) % THREADS.
struct alignas(64) Ring {
  static constexpr std::size_t kSize = 1024;
  void* slots[kSize];
  alignas(64) std::atomic<std::size_t> head{0};  // written by the consumer
  alignas(64) std::atomic<std::size_t> tail{0};  // written by the producer

  bool Push(void* p) {
    std::size_t t = tail.load(std::memory_order_relaxed);
    if (t - head.load(std::memory_order_acquire) == kSize) return false;
    slots[t % kSize] = p;
    tail.store(t + 1, std::memory_order_release);
    return true;
  }
  std::size_t Drain() {  // frees everything handed over so far
    std::size_t h = head.load(std::memory_order_relaxed);
    std::size_t t = tail.load(std::memory_order_acquire);
    for (std::size_t i = h; i < t; ++i) std::free(slots[i % kSize]);
    head.store(t, std::memory_order_release);
    return t - h;
  }
};

std::size_t RandomSize(Rng& rng) {
  std::uint64_t r = rng.Next();
  unsigned bucket = static_cast<unsigned>(r % 100);
  std::uint64_t u = r >> 32;
  if (bucket < 60) return 16 + u % (256 - 16 + 1);
  if (bucket < 90) return 256 + u % (4096 - 256 + 1);
  if (bucket < 99) return 4096 + u % (32768 - 4096 + 1);
  return 32768 + u % (65536 - 32768 + 1);
}

__attribute__((noinline)) std::uint64_t Worker(int id, long ops, long window, Ring* out, Ring* in) {
  Rng rng{0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(id + 1)};
  std::vector<void*> live(static_cast<std::size_t>(window), nullptr);
  std::uint64_t checksum = 0;
  for (long op = 0; op < ops; ++op) {
    std::uint64_t r = rng.Next();
    void*& slot = live[r % static_cast<std::uint64_t>(window)];
    if (slot != nullptr) {
      checksum += *static_cast<unsigned char*>(slot);
      if ((r >> 40) % 16 != 0 || !out->Push(slot)) std::free(slot);
    }
    std::size_t size = RandomSize(rng);
    auto* p = static_cast<unsigned char*>(std::malloc(size));
    if (p == nullptr) std::abort();
    p[0] = static_cast<unsigned char>(op);
    p[size - 1] = 1;
    slot = p;
    if ((op & 255) == 0) in->Drain();
  }
  for (void* p : live) std::free(p);
  return checksum;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  long ops = argc > 2 ? std::atol(argv[2]) : 6000000;
  long window = argc > 3 ? std::atol(argv[3]) : 4096;
  if (threads < 1 || ops < 1 || window < 1) {
    std::fprintf(stderr, "usage: malloc_stress [THREADS [OPS_PER_THREAD [WINDOW]]]\n");
    return 64;
  }
  std::vector<Ring> rings(static_cast<std::size_t>(threads));
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  std::atomic<int> running{threads};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Ring* out = &rings[static_cast<std::size_t>((t + 1) % threads)];
      Ring* in = &rings[static_cast<std::size_t>(t)];
      sums[static_cast<std::size_t>(t)] = Worker(t, ops, window, out, in);
      running.fetch_sub(1);
      while (running.load() > 0) {  // keep draining until every producer is done
        in->Drain();
        std::this_thread::yield();
      }
      in->Drain();
    });
  }
  for (auto& th : pool) th.join();
  for (auto& ring : rings) ring.Drain();
  std::uint64_t total = 0;
  for (auto s : sums) total += s;
  std::printf("malloc_stress threads=%d ops=%ld window=%ld checksum=%llu\n", threads, ops * threads,
              window, static_cast<unsigned long long>(total));
  return 0;
}
