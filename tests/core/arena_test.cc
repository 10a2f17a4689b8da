#include "core/arena.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace heaprec {
namespace {

TEST(MmapArenaTest, BlocksAreAlignedWritableAndDistinct) {
  MmapArena arena;
  std::vector<std::pair<char*, std::size_t>> blocks;
  for (std::size_t size : {1, 15, 16, 17, 100, 4096, 65536, 65537, 1 << 20}) {
    auto* p = static_cast<char*>(arena.Allocate(size));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    std::memset(p, static_cast<int>(size & 0xff), size);
    blocks.emplace_back(p, size);
  }
  for (auto& [p, size] : blocks) {
    for (std::size_t i = 0; i < size; i += 97)
      ASSERT_EQ(static_cast<unsigned char>(p[i]), size & 0xff);
  }
  EXPECT_GT(arena.BytesInUse(), (1u << 20));
  for (auto& [p, size] : blocks) arena.Deallocate(p, size);
  EXPECT_EQ(arena.BytesInUse(), 0u);
}

TEST(MmapArenaTest, FreedBlocksAreReused) {
  MmapArena arena;
  void* a = arena.Allocate(100);
  arena.Deallocate(a, 100);
  void* b = arena.Allocate(120);  // same 128-byte class
  EXPECT_EQ(a, b);
  std::size_t mapped = arena.BytesMapped();
  for (int i = 0; i < 1000; ++i) arena.Deallocate(arena.Allocate(100), 100);
  EXPECT_EQ(arena.BytesMapped(), mapped);
}

// A block handed out again is cleared; one that never was is left to the kernel's zero pages.
TEST(MmapArenaTest, ZeroedBlocksReadAsZeroReusedOrFresh) {
  MmapArena arena;
  for (std::size_t size : {100, 4096, 65536, 65537, 1 << 20}) {
    auto* used = static_cast<unsigned char*>(arena.Allocate(size));
    ASSERT_NE(used, nullptr);
    std::memset(used, 0xa5, size);
    arena.Deallocate(used, size);
    auto* zeroed = static_cast<unsigned char*>(arena.AllocateZeroed(size));
    ASSERT_NE(zeroed, nullptr);
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(zeroed[i], 0) << size << " at " << i;
    arena.Deallocate(zeroed, size);
  }
}

// The point of AllocateZeroed: a table a short process barely uses costs only the pages it uses.
// Fresh from mmap, a zeroed block of 1 MiB has no page in memory until it is written.
TEST(MmapArenaTest, FreshZeroedBlocksAreNotTouched) {
  MmapArena arena;
  constexpr std::size_t kBytes = 1 << 20;
  void* p = arena.AllocateZeroed(kBytes);
  ASSERT_NE(p, nullptr);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident(kBytes / page);
  ASSERT_EQ(mincore(p, kBytes, resident.data()), 0);
  std::size_t in_memory = 0;
  for (unsigned char r : resident) in_memory += r & 1;
  EXPECT_EQ(in_memory, 0u);
  arena.Deallocate(p, kBytes);
}

}  // namespace
}  // namespace heaprec
