#include "core/live_table.h"

#include <gtest/gtest.h>

#include <set>

#include "core/sampled_key_filter.h"

namespace heaprec {
namespace {

TEST(LiveTableTest, InsertFindRemove) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject replaced;
  EXPECT_FALSE(table.MayContain(0x1000));
  EXPECT_EQ(table.Insert(0x1000, {1, 0, 64, 2.0, 5}, &replaced), LiveTable::InsertResult::kInserted);
  EXPECT_TRUE(table.MayContain(0x1000));
  EXPECT_EQ(table.size(), 1u);
  LiveObject removed;
  EXPECT_FALSE(table.Remove(0x2000, &removed));
  ASSERT_TRUE(table.Remove(0x1000, &removed));
  EXPECT_EQ(removed.stack, 1u);
  EXPECT_EQ(removed.size, 64u);
  EXPECT_EQ(removed.weight, 2.0);
  EXPECT_EQ(removed.alloc_time_ns, 5u);
  EXPECT_FALSE(table.Remove(0x1000, &removed));
  EXPECT_EQ(table.size(), 0u);
}

TEST(LiveTableTest, ReinsertingALiveKeyReplacesIt) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject replaced;
  table.Insert(0x10, {1, 0, 8, 1, 0}, &replaced);
  EXPECT_EQ(table.Insert(0x10, {2, 0, 16, 1, 0}, &replaced), LiveTable::InsertResult::kReplaced);
  EXPECT_EQ(replaced.stack, 1u);
  EXPECT_EQ(table.size(), 1u);
}

TEST(LiveTableTest, ManyKeysWithChurnStayConsistent) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  std::set<std::uint64_t> live;
  LiveObject scratch;
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::uint64_t key = (x % 50000 + 1) * 16;
    if (live.count(key) != 0) {
      ASSERT_TRUE(table.Remove(key, &scratch));
      live.erase(key);
    } else {
      ASSERT_EQ(table.Insert(key, {1, 0, key, 1, 0}, &scratch), LiveTable::InsertResult::kInserted);
      live.insert(key);
    }
  }
  EXPECT_EQ(table.size(), live.size());
  std::size_t visited = 0;
  table.ForEach([&](std::uint64_t key, const LiveObject& o) {
    ++visited;
    EXPECT_EQ(o.size, key);
    EXPECT_EQ(live.count(key), 1u);
  });
  EXPECT_EQ(visited, live.size());
  for (std::uint64_t key : live) EXPECT_TRUE(table.MayContain(key));
}

TEST(SampledKeyFilterTest, SaturatedCountersStayMaybe) {
  SampledKeyFilter filter;
  // 300 inserts of one key saturate its counter at 255; removing them all cannot prove absence.
  for (int i = 0; i < 300; ++i) filter.Insert(0x40);
  for (int i = 0; i < 300; ++i) filter.Remove(0x40);
  EXPECT_TRUE(filter.MayContain(0x40));
  // An unsaturated counter returns to zero.
  SampledKeyFilter fresh;
  fresh.Insert(0x80);
  fresh.Insert(0x80);
  fresh.Remove(0x80);
  EXPECT_TRUE(fresh.MayContain(0x80));
  fresh.Remove(0x80);
  EXPECT_FALSE(fresh.MayContain(0x80));
}

}  // namespace
}  // namespace heaprec
