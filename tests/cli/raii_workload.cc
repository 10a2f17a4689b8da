// A program in the RAII style, for the end-of-run summary test (run_summary_test.cc): it builds a
// few MiB of blocks in one known function, keeps them to the end of main and frees them all (the
// vector's and the unique_ptrs' destructors) before it exits, so its final profile holds nothing
// and its peak profile holds the blocks. Built like the e2e workloads: -O1 -g
// -fno-omit-frame-pointer.
//
//   raii_workload [BLOCKS]   (default 64 blocks of 64 KiB: 4 MiB)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace raii {

constexpr size_t kBlockSize = 64 * 1024;

// Every block is allocated here (std::make_unique's operator new[] is the library's, not a site).
__attribute__((noinline)) std::vector<std::unique_ptr<char[]>> LoadBlocks(long count) {
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(static_cast<size_t>(count));
  for (long i = 0; i < count; ++i) {
    blocks.push_back(std::make_unique<char[]>(kBlockSize));
    std::memset(blocks.back().get(), static_cast<int>(i), kBlockSize);
  }
  return blocks;
}

}  // namespace raii

int main(int argc, char** argv) {
  long count = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 64;
  std::vector<std::unique_ptr<char[]>> blocks = raii::LoadBlocks(count);
  unsigned sum = 0;
  for (const std::unique_ptr<char[]>& block : blocks) sum += static_cast<unsigned char>(block[1]);
  // Through a buffer on the stack: stdio's own buffer would stay allocated to the end.
  char line[64];
  int n = std::snprintf(line, sizeof line, "loaded %ld blocks, sum %u\n", count, sum);
  if (write(STDOUT_FILENO, line, static_cast<size_t>(n)) != n) return 1;
  return 0;  // `blocks` is freed here, before exit: the final profile holds nothing
}
