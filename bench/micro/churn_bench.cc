// The allocator hot paths on a realistic address stream: every thread keeps a working set of
// 32,768 live blocks (16 B to 1 KiB, about 17 MiB), and each operation frees the block in a random
// slot and allocates a new one of a random size there, so frees arrive in random order over many
// MiB and nothing the hooks touch stays in cache by accident. Runs on 1 and 2 threads.
//
// Each thread has two such working sets, one used through glibc's own names (__libc_malloc /
// __libc_free, never interposed) and one through malloc / free (the interposer's, whichever is
// preloaded); every iteration runs one batch of kBatch operations on each, in alternating order,
// and the counters are medians over iterations: real_ns and interposed_ns per operation, and
// overhead_ns, their paired difference. Run it under libheaprec.so and under the do-nothing floor
// (bench/floor): heaprec's cost beyond the floor is the difference of the two overhead_ns figures
// (bench/micro/run_micro.sh prints both). Unlike micro_unsampled it does not force the interval:
// under heaprec it samples at the default interval, as a program would.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "micro_common.h"

namespace {

using heaprec_bench::Heaprec;
using heaprec_bench::NowNs;
using heaprec_bench::Real;

constexpr int kSlots = 32768;
constexpr int kBatch = 4096;

struct Rng {  // xorshift64*
  std::uint64_t s;
  std::uint64_t Next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
};

std::size_t RandomSize(Rng& rng) { return 16 + rng.Next() % 1009; }

template <typename Alloc>
struct WorkingSet {
  std::vector<void*> slots;
  Rng rng;
  explicit WorkingSet(std::uint64_t seed) : slots(kSlots), rng{seed} {
    for (void*& p : slots) p = Alloc::Malloc(RandomSize(rng));
  }
  ~WorkingSet() {
    for (void* p : slots) Alloc::Free(p);
  }
  // kBatch operations; returns nanoseconds per operation.
  double Batch() {
    std::uint64_t t0 = NowNs();
    for (int i = 0; i < kBatch; ++i) {
      std::uint64_t r = rng.Next();
      void*& slot = slots[r % kSlots];
      Alloc::Free(slot);
      slot = Alloc::Malloc(16 + (r >> 40) % 1009);
      benchmark::DoNotOptimize(slot);
    }
    return static_cast<double>(NowNs() - t0) / kBatch;
  }
};

double Median(std::vector<double>& v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void BM_Churn(benchmark::State& state) {
  std::uint64_t seed = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(state.thread_index() + 1);
  WorkingSet<Real> real(seed);
  WorkingSet<Heaprec> interposed(seed ^ 0x5555);
  std::vector<double> real_ns, interposed_ns, overhead_ns;
  bool real_first = state.thread_index() % 2 == 0;
  for (auto _ : state) {
    double r, h;
    if (real_first) {
      r = real.Batch();
      h = interposed.Batch();
    } else {
      h = interposed.Batch();
      r = real.Batch();
    }
    real_first = !real_first;
    real_ns.push_back(r);
    interposed_ns.push_back(h);
    overhead_ns.push_back(h - r);
    state.SetIterationTime((r + h) * kBatch * 1e-9);
  }
  // Per thread; Google Benchmark averages counters over threads.
  state.counters["real_ns"] = Median(real_ns);
  state.counters["interposed_ns"] = Median(interposed_ns);
  state.counters["overhead_ns"] = Median(overhead_ns);
}

BENCHMARK(BM_Churn)->Threads(1)->Threads(2)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
