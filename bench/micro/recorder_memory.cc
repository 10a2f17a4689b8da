// What the recorder's tables cost per live block and per unique stack, measured in process on the
// arena the preload library uses, counting each request as the arena rounds it (size classes of
// 16 B-64 KiB, pages above). Prints one JSON object; bench/profiler_memory.py reads it.
//
//   recorder_memory [BLOCKS [PATHS]]        (default 500000 2048)
//
// live_table: LiveTable bytes per live object, over inserts from BLOCKS/2 to 2*BLOCKS (two growth
//   cycles of its tables: min, max, and the figure at BLOCKS).
// stack_table: StackTable bytes per stack for PATHS stacks shaped like bench/workloads/deep_stacks
//   (4 outer frames, 8 shared levels of 2 frames, then log2(PATHS) levels of two call sites each),
//   and for 4x fewer and 4x more paths.
// recorder: a whole HeapRecorder (allocation history on, as in libheaprec.so) holding BLOCKS
//   objects from PATHS stacks, 7 sizes per stack: bytes per live object, all tables included.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/arena.h"
#include "core/heap_recorder.h"
#include "core/live_table.h"
#include "core/stack_table.h"

namespace {

// Forwards to an MmapArena and adds up what each request really takes from it.
class CountingArena final : public heaprec::MemoryResource {
 public:
  void* Allocate(std::size_t bytes) override {
    void* p = arena_.Allocate(bytes);
    if (p != nullptr) taken_ += Rounded(bytes);
    return p;
  }
  void Deallocate(void* p, std::size_t bytes) override {
    if (p == nullptr) return;
    arena_.Deallocate(p, bytes);
    taken_ -= Rounded(bytes);
  }
  std::size_t BytesInUse() const override { return taken_; }

 private:
  static std::size_t Rounded(std::size_t bytes) {
    if (bytes > 65536) return (bytes + 4095) & ~std::size_t{4095};
    std::size_t block = 16;
    while (block < bytes) block *= 2;
    return block;
  }
  heaprec::MmapArena arena_;
  std::size_t taken_ = 0;
};

// The frames of deep_stacks' path `path`, leaf first.
std::vector<std::uint64_t> PathFrames(unsigned path, int branch_levels) {
  constexpr int kSharedLevels = 8;
  std::vector<std::uint64_t> outer_first = {0x401000, 0x401100, 0x401200, 0x401300};  // _start..Run
  for (int level = 0; level < kSharedLevels + branch_levels; ++level) {
    bool right = level >= kSharedLevels && ((path >> (level - kSharedLevels)) & 1) != 0;
    outer_first.push_back(right ? 0x402100 : 0x402000);  // Step's call of Left or Right
    outer_first.push_back(right ? 0x403000 : 0x404000);  // Left's or Right's call of Step
  }
  outer_first.push_back(0x405000);  // Allocate's call of malloc
  return {outer_first.rbegin(), outer_first.rend()};
}

int Log2(unsigned paths) {
  int levels = 0;
  while ((1u << levels) < paths) ++levels;
  return levels;
}

double StackBytesPerStack(unsigned paths) {
  CountingArena memory;
  std::size_t before = memory.BytesInUse();
  {
    heaprec::StackTable stacks(memory);
    int levels = Log2(paths);
    for (unsigned p = 0; p < paths; ++p) {
      std::vector<std::uint64_t> frames = PathFrames(p, levels);
      if (stacks.Intern(frames.data(), static_cast<std::uint32_t>(frames.size())) ==
          heaprec::kInvalidStackId) {
        std::fprintf(stderr, "recorder_memory: out of memory\n");
        std::exit(1);
      }
    }
    return static_cast<double>(memory.BytesInUse() - before) / paths;
  }
}

std::uint64_t Key(std::size_t i) { return 0x7f0000000000ull + i * 48; }

}  // namespace

int main(int argc, char** argv) {
  std::size_t blocks = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 500000;
  unsigned paths = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 2048;
  if (blocks < 1000 || paths == 0 || (paths & (paths - 1)) != 0) {
    std::fprintf(stderr, "usage: recorder_memory [BLOCKS>=1000 [PATHS, a power of two]]\n");
    return 2;
  }

  double live_min = 1e30, live_max = 0, live_at = 0;
  {
    CountingArena memory;
    heaprec::LiveTable live(memory);
    heaprec::LiveObject object = {1, 0, 48, 1.0, 0};
    heaprec::LiveObject replaced;
    const std::size_t step = blocks / 100;
    for (std::size_t i = 0; i < 2 * blocks; ++i) {
      if (live.Insert(Key(i), object, &replaced) != heaprec::LiveTable::InsertResult::kInserted) {
        std::fprintf(stderr, "recorder_memory: insert failed\n");
        return 1;
      }
      std::size_t n = i + 1;
      if (n >= blocks / 2 && (n % step == 0 || n == blocks)) {
        double per = static_cast<double>(memory.BytesInUse()) / static_cast<double>(n);
        if (per < live_min) live_min = per;
        if (per > live_max) live_max = per;
        if (n == blocks) live_at = per;
      }
    }
  }

  double recorder_per_block = 0;
  std::size_t history_entries = 0, stacks = 0;
  {
    CountingArena memory;
    heaprec::HeapRecorder recorder(memory, heaprec::RecorderOptions{});
    int levels = Log2(paths);
    std::vector<std::vector<std::uint64_t>> frames;
    for (unsigned p = 0; p < paths; ++p) frames.push_back(PathFrames(p, levels));
    for (std::size_t i = 0; i < blocks; ++i) {
      const std::vector<std::uint64_t>& f = frames[i % paths];
      recorder.Record(Key(i), f.data(), static_cast<std::uint32_t>(f.size()), 16 + (i * 7) % 49,
                      1.0, 1);
    }
    heaprec::RecorderStats stats = recorder.Stats();
    history_entries = stats.history_entries;
    stacks = stats.stacks;
    recorder_per_block = static_cast<double>(memory.BytesInUse()) / static_cast<double>(blocks);
  }

  std::printf(
      "{\"blocks\": %zu, \"paths\": %u, \"depth\": %zu,"
      " \"live_table_bytes_per_block\": {\"at_blocks\": %.1f, \"min\": %.1f, \"max\": %.1f},"
      " \"stack_table_bytes_per_stack\": {\"%u\": %.1f, \"%u\": %.1f, \"%u\": %.1f},"
      " \"recorder_bytes_per_block\": %.1f, \"recorder_stacks\": %zu,"
      " \"recorder_history_entries\": %zu}\n",
      blocks, paths, PathFrames(0, Log2(paths)).size(), live_at, live_min, live_max,
      paths / 4 == 0 ? 1 : paths / 4, StackBytesPerStack(paths / 4 == 0 ? 1 : paths / 4), paths,
      StackBytesPerStack(paths), paths * 4, StackBytesPerStack(paths * 4), recorder_per_block,
      stacks, history_entries);
  return 0;
}
