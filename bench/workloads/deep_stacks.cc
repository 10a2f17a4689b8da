// Holds many live blocks allocated from many deep call stacks that share their prefixes, then asks
// heaprec for a profile: the workload of bench/profiler_memory.py, which reads the profile's
// profiler_bytes= comment.
//
//   deep_stacks BLOCKS PATHS PROFILE
//
// Every stack is main -> Run -> 8 shared levels -> log2(PATHS) levels that each take one of two
// call sites (Left or Right, by one bit of the path number) -> Allocate: two frames a level, so
// PATHS distinct stacks of 2 * (8 + log2(PATHS)) + 4 frames sharing every frame but the branches'.
// Block i comes from path i % PATHS, 16-64 bytes; all stay live until the process exits. PROFILE
// is where heaprec_dump() writes (looked up with dlsym, so the program runs without heaprec too).
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kSharedLevels = 8;

int g_branch_levels = 0;
void** g_blocks = nullptr;
std::size_t g_next = 0;

// Keeps a call from becoming a tail call, so every level leaves its return address on the stack.
inline void KeepFrame() { asm volatile("" ::: "memory"); }

__attribute__((noinline)) void Allocate(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    g_blocks[g_next] = std::malloc(16 + (g_next * 7) % 49);
    ++g_next;
  }
  KeepFrame();
}

__attribute__((noinline)) void Step(int level, unsigned path, std::size_t count);

__attribute__((noinline)) void Left(int level, unsigned path, std::size_t count) {
  Step(level + 1, path, count);
  KeepFrame();
}

__attribute__((noinline)) void Right(int level, unsigned path, std::size_t count) {
  Step(level + 1, path, count);
  KeepFrame();
}

__attribute__((noinline)) void Step(int level, unsigned path, std::size_t count) {
  if (level == kSharedLevels + g_branch_levels) {
    Allocate(count);
  } else if (level >= kSharedLevels && ((path >> (level - kSharedLevels)) & 1) != 0) {
    Right(level, path, count);
  } else {
    Left(level, path, count);
  }
  KeepFrame();
}

__attribute__((noinline)) void Run(std::size_t blocks, unsigned paths) {
  // Path p gets blocks p, p + PATHS, p + 2 PATHS, ...: one descent per path.
  for (unsigned p = 0; p < paths; ++p) {
    std::size_t count = blocks / paths + (p < blocks % paths ? 1 : 0);
    if (count != 0) Step(0, p, count);
  }
  KeepFrame();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: deep_stacks BLOCKS PATHS PROFILE (PATHS a power of two)\n");
    return 2;
  }
  std::size_t blocks = std::strtoull(argv[1], nullptr, 10);
  unsigned paths = static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10));
  if (paths == 0 || (paths & (paths - 1)) != 0 || paths > (1u << 20)) {
    std::fprintf(stderr, "deep_stacks: PATHS must be a power of two up to 2^20\n");
    return 2;
  }
  while ((1u << g_branch_levels) < paths) ++g_branch_levels;
  g_blocks = static_cast<void**>(std::calloc(blocks + 1, sizeof(void*)));
  if (g_blocks == nullptr) return 1;
  Run(blocks, paths);
  using DumpFunction = int (*)(const char*);
  auto dump = reinterpret_cast<DumpFunction>(dlsym(RTLD_DEFAULT, "heaprec_dump"));
  int rc = dump != nullptr ? dump(argv[3]) : 0;
  std::printf("deep_stacks: %zu blocks from %u stacks, dump %s\n", blocks, paths,
              dump == nullptr ? "unavailable"
              : rc == 0       ? "written"
                              : "failed");
  return rc == 0 ? 0 : 1;
}
