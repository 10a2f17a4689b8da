#include "core/arena.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace heaprec
