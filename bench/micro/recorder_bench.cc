// The two halves of a sampled allocation, measured apart, without LD_PRELOAD: unwinding, and the
// recorder's bookkeeping. Together with BM_SampledPath (sampled_bench.cc) they say where a sampled
// allocation's time goes: sampled cost ~= unwind + Record + (clock read, weight, hook overhead).
//
// BM_Unwind/DEPTH: libgcc's _Unwind_Backtrace, loaded privately exactly as
//   heaprec loads it, called from a function DEPTH frames deep (same fresh-thread, 64-path descent
//   as BM_SampledPath). heaprec itself unwinds ~3 more frames (its hooks, then dropped). unwind_ns
//   is per call.
//
// BM_RecordForget/DEPTH/BACKGROUND: HeapRecorder::Record then Forget with synthetic stacks of DEPTH
//   frames (64 distinct stacks, cycled), on the preload library's MmapArena with allocation history
//   on, as in libheaprec.so. kBatch keys are recorded (timed), then forgotten (timed): record_ns
//   and forget_ns per operation. BACKGROUND other objects from 1000 other stacks stay live
//   meanwhile, so the tables have a realistic size instead of being nearly empty and
//   cache-resident.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "core/arena.h"
#include "core/heap_recorder.h"
#include "micro_common.h"

namespace {

using heaprec_bench::NowNs;

constexpr int kPaths = 64;
constexpr int kBatch = 64;
constexpr int kUnwindBatch = 8;

struct UnwindWork {
  heaprec_bench::UnwBacktraceFn backtrace;
  std::uint64_t ns = 0;
  int depth = 0;
};

__attribute__((noinline)) void UnwindLeaf(void* arg) {
  auto& work = *static_cast<UnwindWork*>(arg);
  void* frames[256];
  std::uint64_t t0 = NowNs();
  for (int i = 0; i < kUnwindBatch; ++i) {
    work.depth = work.backtrace(frames, 256);
    benchmark::DoNotOptimize(frames);
  }
  work.ns += NowNs() - t0;
}

void UnwindOnThread(void* arg) {
  auto& state = *static_cast<benchmark::State*>(arg);
  UnwindWork work{heaprec_bench::LoadUnwBacktrace(true)};
  int levels = heaprec_bench::LevelsForDepth(static_cast<int>(state.range(0)));
  if (work.backtrace == nullptr || levels < 0) {
    state.SkipWithError("libgcc_s.so.1 not found, or stack already too deep");
    return;
  }
  std::uint64_t path = 0;
  for (auto _ : state) {
    std::uint64_t before = work.ns;
    heaprec_bench::Descend(levels, path++ % kPaths, UnwindLeaf, &work);
    state.SetIterationTime(static_cast<double>(work.ns - before) * 1e-9);
  }
  state.counters["unwind_ns"] =
      static_cast<double>(work.ns) / (static_cast<double>(state.iterations()) * kUnwindBatch);
  state.counters["depth"] = work.depth;  // frames from the leaf down, as heaprec would keep them
}

void BM_Unwind(benchmark::State& state) { heaprec_bench::RunOnFreshThread(UnwindOnThread, &state); }

// Frames that look like return addresses in a PIE's text, distinct per (stack, level).
void FillStack(std::uint64_t* frames, int depth, std::uint64_t stack) {
  for (int level = 0; level < depth; ++level) {
    frames[level] = 0x55d0c0de0000ull + heaprec_bench::PathBits(stack * 1024 + level) % 0x100000;
  }
}

void BM_RecordForget(benchmark::State& state) {
  // One arena for the process, as in the preload library; each run's recorder returns its live
  // objects to it.
  static heaprec::MmapArena* arena = new heaprec::MmapArena();
  const int depth = static_cast<int>(state.range(0));
  const auto background = static_cast<std::uint64_t>(state.range(1));
  auto recorder = std::make_unique<heaprec::HeapRecorder>(*arena, heaprec::RecorderOptions{});
  std::vector<std::uint64_t> storage((kPaths + 1000) * 64);
  auto frames = [&](std::uint64_t s) { return storage.data() + s * 64; };
  for (int s = 0; s < kPaths + 1000; ++s) FillStack(frames(s), depth, s);
  // Keys look like 16-byte-aligned heap addresses: the background in one range, the batch in
  // another.
  for (std::uint64_t i = 0; i < background; ++i) {
    recorder->Record(0x7f0000000000ull + i * 48, frames(kPaths + i % 1000), depth, 48, 1.0, 0);
  }
  std::uint64_t record_ns = 0, forget_ns = 0, stack = 0;
  for (auto _ : state) {
    std::uint64_t t0 = NowNs();
    for (std::uint64_t k = 0; k < kBatch; ++k) {
      recorder->Record(0x5600000000ull + k * 64, frames(stack++ % kPaths), depth, 64, 1.0, t0);
    }
    std::uint64_t t1 = NowNs();
    for (std::uint64_t k = 0; k < kBatch; ++k) {
      bool found = recorder->Forget(0x5600000000ull + k * 64);
      benchmark::DoNotOptimize(found);
    }
    std::uint64_t t2 = NowNs();
    record_ns += t1 - t0;
    forget_ns += t2 - t1;
    state.SetIterationTime(static_cast<double>(t2 - t0) * 1e-9);
  }
  double ops = static_cast<double>(state.iterations()) * kBatch;
  state.counters["record_ns"] = static_cast<double>(record_ns) / ops;
  state.counters["forget_ns"] = static_cast<double>(forget_ns) / ops;
  for (std::uint64_t i = 0; i < background; ++i) recorder->Forget(0x7f0000000000ull + i * 48);
}

BENCHMARK(BM_Unwind)->Arg(10)->Arg(30)->Arg(60)->UseManualTime();
BENCHMARK(BM_RecordForget)
    ->ArgNames({"depth", "background"})
    ->ArgsProduct({{10, 30, 60}, {0, 100000}})
    ->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
