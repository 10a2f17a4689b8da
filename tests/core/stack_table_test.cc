#include "core/stack_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace heaprec {
namespace {

std::vector<std::uint64_t> Frames(std::uint64_t seed, std::uint32_t depth) {
  std::vector<std::uint64_t> f(depth);
  for (std::uint32_t i = 0; i < depth; ++i) f[i] = seed * 1000 + i;
  return f;
}

TEST(StackTableTest, IdenticalStacksShareOneEntry) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Frames(1, 10), b = Frames(2, 10);
  StackId ia = table.Intern(a.data(), 10);
  StackId ib = table.Intern(b.data(), 10);
  StackId ia2 = table.Intern(a.data(), 10);
  EXPECT_NE(ia, kInvalidStackId);
  EXPECT_NE(ia, ib);
  EXPECT_EQ(ia, ia2);
  EXPECT_EQ(table.RefCount(ia), 2u);
  EXPECT_EQ(table.size(), 2u);
  // A prefix is a different stack.
  EXPECT_NE(table.Intern(a.data(), 9), ia);
  StackFrames f = table.Frames(ia);
  ASSERT_EQ(f.depth, 10u);
  EXPECT_EQ(std::vector<std::uint64_t>(f.frames, f.frames + f.depth), a);
}

TEST(StackTableTest, LastUnrefRemovesAndIdIsReused) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Frames(1, 5), b = Frames(2, 5);
  StackId ia = table.Intern(a.data(), 5);
  table.Ref(ia);
  table.Unref(ia);
  EXPECT_EQ(table.size(), 1u);
  table.Unref(ia);
  EXPECT_EQ(table.size(), 0u);
  StackId ib = table.Intern(b.data(), 5);
  EXPECT_EQ(ib, ia);  // the freed id is recycled
  StackFrames f = table.Frames(ib);
  EXPECT_EQ(f.frames[0], b[0]);
}

TEST(StackTableTest, PinnedStacksKeepTheirFramesUntilUnpinned) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Frames(7, 3);
  StackId ia = table.Intern(a.data(), 3);
  table.Pin();
  table.Unref(ia);
  EXPECT_EQ(table.size(), 0u);  // gone from the index: a new intern makes a new entry
  StackId again = table.Intern(a.data(), 3);
  EXPECT_NE(again, ia);
  StackFrames f = table.Frames(ia);  // but the old frames are still readable
  ASSERT_EQ(f.depth, 3u);
  EXPECT_EQ(f.frames[2], a[2]);
  std::size_t in_use = memory.BytesInUse();
  table.Unpin();
  EXPECT_LT(memory.BytesInUse(), in_use);  // released at the last unpin
}

TEST(StackTableTest, ManyStacksGrowTheTable) {
  SystemMemoryResource memory;
  StackTable table(memory);
  constexpr int kStacks = 50000;
  std::vector<StackId> ids;
  for (int i = 0; i < kStacks; ++i) {
    auto f = Frames(static_cast<std::uint64_t>(i), 1 + i % 40);
    ids.push_back(table.Intern(f.data(), static_cast<std::uint32_t>(f.size())));
  }
  EXPECT_EQ(table.size(), static_cast<std::size_t>(kStacks));
  for (int i = 0; i < kStacks; ++i) {
    auto f = Frames(static_cast<std::uint64_t>(i), 1 + i % 40);
    ASSERT_EQ(table.Intern(f.data(), static_cast<std::uint32_t>(f.size())), ids[i]);
    table.Unref(ids[i]);
    table.Unref(ids[i]);
  }
  EXPECT_EQ(table.size(), 0u);
}

TEST(StackTableTest, EmptyStackIsAStack) {
  SystemMemoryResource memory;
  StackTable table(memory);
  StackId id = table.Intern(nullptr, 0);
  EXPECT_NE(id, kInvalidStackId);
  EXPECT_EQ(table.Intern(nullptr, 0), id);
  EXPECT_EQ(table.Frames(id).depth, 0u);
}

}  // namespace
}  // namespace heaprec
