// What heaprec adds to an allocation it does not sample: the malloc countdown and the free filter
// miss. Runs under LD_PRELOAD=libheaprec.so; the sampling interval is forced to 1 TiB so that
// nothing is sampled while measuring (a few GB are allocated in all: ~0.01 expected samples).
//
// Both allocators are measured in the same process, on the same heap state:
//   real    = __libc_malloc / __libc_free: glibc's exported names, never interposed;
//   heaprec = malloc / free: the program's normal calls, which land in libheaprec.so's hooks and
//             then tail-call the same glibc functions.
// So heaprec - real is exactly the hook cost (including the extra PLT jump), nothing else.
//
// BM_Batch isolates malloc from free without PauseTiming (which costs far more than the ns being
// measured): each iteration allocates kBatch blocks, then frees them, reading the clock around each
// phase. The two clock reads per phase (~20 ns each, vDSO) are spread over kBatch operations and
// are the same for both allocators. Counters malloc_ns and free_ns are per operation; the Time
// column is per batch (both phases).
//
// BM_Paired runs the same batches for both allocators within each iteration: see below.
//
// BM_Pair is malloc immediately followed by free: glibc's tcache fast path, the case where the
// hooks' cost is the largest fraction of the total. Time column = one pair.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "micro_common.h"

using heaprec_bench::Heaprec;
using heaprec_bench::Real;

namespace {

using heaprec_bench::NowNs;

constexpr std::uint64_t kHugeInterval = std::uint64_t{1} << 40;
constexpr int kBatch = 256;

template <typename Alloc>
void BM_Batch(benchmark::State& state, Alloc) {
  if (const char* why = heaprec_bench::UseSampleInterval(kHugeInterval)) {
    state.SkipWithError(why);
    return;
  }
  const auto size = static_cast<std::size_t>(state.range(0));
  void* blocks[kBatch];
  std::uint64_t malloc_ns = 0, free_ns = 0;
  for (auto _ : state) {
    std::uint64_t t0 = NowNs();
    for (int i = 0; i < kBatch; ++i) blocks[i] = Alloc::Malloc(size);
    benchmark::DoNotOptimize(blocks);  // the pointers escape: no call can be elided
    std::uint64_t t1 = NowNs();
    for (int i = 0; i < kBatch; ++i) Alloc::Free(blocks[i]);
    benchmark::ClobberMemory();
    std::uint64_t t2 = NowNs();
    malloc_ns += t1 - t0;
    free_ns += t2 - t1;
    state.SetIterationTime(static_cast<double>(t2 - t0) * 1e-9);
  }
  double ops = static_cast<double>(state.iterations()) * kBatch;
  state.counters["malloc_ns"] = static_cast<double>(malloc_ns) / ops;
  state.counters["free_ns"] = static_cast<double>(free_ns) / ops;
}

template <typename Alloc>
void BM_Pair(benchmark::State& state, Alloc) {
  if (const char* why = heaprec_bench::UseSampleInterval(kHugeInterval)) {
    state.SkipWithError(why);
    return;
  }
  const auto size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = Alloc::Malloc(size);
    benchmark::DoNotOptimize(p);
    Alloc::Free(p);
  }
}

// Real and heaprec back to back in every iteration (order alternating), so both see the same noise
// on a busy machine; reports the median over iterations of each per-op figure and of the per-op
// differences (a batch that was preempted moves a mean, not a median). The robust overhead figure.
void BM_Paired(benchmark::State& state) {
  if (const char* why = heaprec_bench::UseSampleInterval(kHugeInterval)) {
    state.SkipWithError(why);
    return;
  }
  const auto size = static_cast<std::size_t>(state.range(0));
  enum { kRealMalloc, kRealFree, kHeaprecMalloc, kHeaprecFree, kFigures };
  std::vector<double> ns[kFigures], malloc_delta, free_delta;
  void* blocks[kBatch];
  auto batch = [&](auto alloc, int first) {
    std::uint64_t t0 = NowNs();
    for (int i = 0; i < kBatch; ++i) blocks[i] = decltype(alloc)::Malloc(size);
    benchmark::DoNotOptimize(blocks);
    std::uint64_t t1 = NowNs();
    for (int i = 0; i < kBatch; ++i) decltype(alloc)::Free(blocks[i]);
    benchmark::ClobberMemory();
    std::uint64_t t2 = NowNs();
    ns[first].push_back(static_cast<double>(t1 - t0) / kBatch);
    ns[first + 1].push_back(static_cast<double>(t2 - t1) / kBatch);
    return static_cast<double>(t2 - t0) * 1e-9;
  };
  bool real_first = true;
  for (auto _ : state) {
    double seconds = real_first ? batch(Real{}, kRealMalloc) + batch(Heaprec{}, kHeaprecMalloc)
                                : batch(Heaprec{}, kHeaprecMalloc) + batch(Real{}, kRealMalloc);
    real_first = !real_first;
    malloc_delta.push_back(ns[kHeaprecMalloc].back() - ns[kRealMalloc].back());
    free_delta.push_back(ns[kHeaprecFree].back() - ns[kRealFree].back());
    state.SetIterationTime(seconds);
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  state.counters["real_malloc_ns"] = median(ns[kRealMalloc]);
  state.counters["heaprec_malloc_ns"] = median(ns[kHeaprecMalloc]);
  state.counters["malloc_overhead_ns"] = median(malloc_delta);
  state.counters["real_free_ns"] = median(ns[kRealFree]);
  state.counters["heaprec_free_ns"] = median(ns[kHeaprecFree]);
  state.counters["free_overhead_ns"] = median(free_delta);
}

// 16 and 64: tcache / fastbin sizes; 512: tcache but small-bin when the batch overflows it; 4096:
// neither, glibc's slower path (where the hooks' fixed cost matters least).
#define HEAPREC_SIZES Arg(16)->Arg(64)->Arg(512)->Arg(4096)
BENCHMARK_CAPTURE(BM_Batch, real, Real{})->HEAPREC_SIZES->UseManualTime();
BENCHMARK_CAPTURE(BM_Batch, heaprec, Heaprec{})->HEAPREC_SIZES->UseManualTime();
BENCHMARK_CAPTURE(BM_Pair, real, Real{})->HEAPREC_SIZES;
BENCHMARK_CAPTURE(BM_Pair, heaprec, Heaprec{})->HEAPREC_SIZES;
BENCHMARK(BM_Paired)->HEAPREC_SIZES->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
