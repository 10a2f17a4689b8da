// heaprec's sampled paths, in exact mode (the interval is forced to 1: every allocation is
// sampled). Runs under LD_PRELOAD=libheaprec.so.
//
// BM_FreeSampled: free() of blocks that are tracked: the filter hit, the live-table removal (shard
//   lock) and the stack unref (stack lock), then glibc's free. The blocks are allocated beforehand
//   in each iteration (sampled, untimed: only the clock around the free phase counts), kBatch at a
//   time. The "real" variant frees __libc_malloc'd blocks with __libc_free: glibc's own cost.
//   free_ns is per operation.
//
// BM_SampledPath/{real,heaprec}/DEPTH: the whole sampled allocation (unwind + intern + insert) and
//   the sampled free, with the allocating function DEPTH frames deep (the depth an unwinder sees,
//   outermost frame included; reported as counter "depth"). Each run happens on a fresh thread so
//   shallow depths are reachable, and each iteration descends through a different one of 64 paths
//   of distinct call sites, so the stack table holds 64 different stacks (not one hot entry) and
//   libunwind's cache sees varying return addresses. At the leaf, kLeafBatch mallocs are timed,
//   then the frees; the descent itself is outside the clock. heaprec's cost per sampled allocation
//   is heaprec.malloc_ns - real.malloc_ns (real = the same descent calling __libc_malloc), and
//   likewise for free.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "micro_common.h"

using heaprec_bench::Heaprec;
using heaprec_bench::Real;

namespace {

using heaprec_bench::NowNs;

constexpr int kBatch = 256;
constexpr int kLeafBatch = 8;
constexpr int kPaths = 64;
constexpr std::size_t kSize = 64;

template <typename Alloc>
void BM_FreeSampled(benchmark::State& state, Alloc) {
  if (const char* why = heaprec_bench::UseSampleInterval(1)) {
    state.SkipWithError(why);
    return;
  }
  void* blocks[kBatch];
  std::uint64_t free_ns = 0;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) blocks[i] = Alloc::Malloc(kSize);
    benchmark::DoNotOptimize(blocks);
    std::uint64_t t0 = NowNs();
    for (int i = 0; i < kBatch; ++i) Alloc::Free(blocks[i]);
    benchmark::ClobberMemory();
    std::uint64_t t1 = NowNs();
    free_ns += t1 - t0;
    state.SetIterationTime(static_cast<double>(t1 - t0) * 1e-9);
  }
  state.counters["free_ns"] =
      static_cast<double>(free_ns) / (static_cast<double>(state.iterations()) * kBatch);
}

// What one descent does at the bottom of the stack.
struct LeafWork {
  void* blocks[kLeafBatch];
  std::uint64_t malloc_ns = 0, free_ns = 0;
  int depth = 0;  // measured once, outside the clock
};

template <typename Alloc>
__attribute__((noinline)) void Leaf(void* arg) {
  auto& work = *static_cast<LeafWork*>(arg);
  if (work.depth == 0) work.depth = heaprec_bench::FramesBelowCaller();
  std::uint64_t t0 = NowNs();
  for (int i = 0; i < kLeafBatch; ++i) work.blocks[i] = Alloc::Malloc(kSize);
  benchmark::DoNotOptimize(work.blocks);
  std::uint64_t t1 = NowNs();
  for (int i = 0; i < kLeafBatch; ++i) Alloc::Free(work.blocks[i]);
  benchmark::ClobberMemory();
  std::uint64_t t2 = NowNs();
  work.malloc_ns += t1 - t0;
  work.free_ns += t2 - t1;
}

template <typename Alloc>
void SampledPathOnThread(void* arg) {
  auto& state = *static_cast<benchmark::State*>(arg);
  int levels = heaprec_bench::LevelsForDepth(static_cast<int>(state.range(0)));
  if (levels < 0) {
    state.SkipWithError("stack already deeper than the requested depth");
    return;
  }
  LeafWork work;
  std::uint64_t path = 0;
  for (auto _ : state) {
    std::uint64_t before = work.malloc_ns + work.free_ns;
    heaprec_bench::Descend(levels, path++ % kPaths, Leaf<Alloc>, &work);
    state.SetIterationTime(static_cast<double>(work.malloc_ns + work.free_ns - before) * 1e-9);
  }
  double ops = static_cast<double>(state.iterations()) * kLeafBatch;
  state.counters["malloc_ns"] = static_cast<double>(work.malloc_ns) / ops;
  state.counters["free_ns"] = static_cast<double>(work.free_ns) / ops;
  state.counters["depth"] = work.depth;
}

template <typename Alloc>
void BM_SampledPath(benchmark::State& state, Alloc) {
  if (const char* why = heaprec_bench::UseSampleInterval(1)) {
    state.SkipWithError(why);
    return;
  }
  heaprec_bench::RunOnFreshThread(SampledPathOnThread<Alloc>, &state);
}

BENCHMARK_CAPTURE(BM_FreeSampled, real, Real{})->UseManualTime();
BENCHMARK_CAPTURE(BM_FreeSampled, heaprec, Heaprec{})->UseManualTime();
BENCHMARK_CAPTURE(BM_SampledPath, real, Real{})->Arg(10)->Arg(30)->Arg(60)->UseManualTime();
BENCHMARK_CAPTURE(BM_SampledPath, heaprec, Heaprec{})->Arg(10)->Arg(30)->Arg(60)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
