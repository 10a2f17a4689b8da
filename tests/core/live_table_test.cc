#include "core/live_table.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "core/sampled_key_filter.h"
#include "failing_memory.h"

namespace heaprec {
namespace {

// A fixed sequence of pseudo-random keys (xorshift64).
std::uint64_t Xorshift(std::uint64_t x) {
  x ^= x << 13;
  x ^= x >> 7;
  return x ^ (x << 17);
}

// A lane per key, as if each object came from one of many threads: every shard gets objects.
std::uint32_t Lane(std::uint64_t key) { return static_cast<std::uint32_t>(key * 0x9e3779b9u >> 7); }

TEST(LiveTableTest, InsertFindRemove) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject replaced;
  EXPECT_FALSE(table.MayContain(0x1000));
  EXPECT_EQ(table.Insert(0x1000, {1, 0, 64, 2.0, 5}, &replaced),
            LiveTable::InsertResult::kInserted);
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
    x = Xorshift(x);
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

// Goal: at most 64 bytes per live object wherever the tables are in their growth cycle.
TEST(LiveTableTest, AtMost64BytesPerObjectThroughGrowth) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject scratch;
  double most = 0;
  for (std::uint64_t i = 1; i <= 400000; ++i) {
    ASSERT_EQ(table.Insert(i * 16, {1, 0, 8, 1, 0}, &scratch), LiveTable::InsertResult::kInserted);
    if (i >= 100000 && i % 1000 == 0) {
      double per = static_cast<double>(memory.BytesInUse()) / static_cast<double>(i);
      if (per > most) most = per;
    }
  }
  EXPECT_LE(most, 64.0);
  EXPECT_GT(most, 40.0);  // a record alone is 40 bytes: the measure measures something
}

TEST(LiveTableTest, RemovedRecordsAreReused) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject scratch;
  for (std::uint64_t i = 1; i <= 5000; ++i) table.Insert(i * 16, {1, 0, i, 1, 0}, &scratch);
  std::size_t in_use = 0;  // after the first round, which makes the stacks of free positions
  for (int round = 0; round < 20; ++round) {
    if (round == 1) in_use = memory.BytesInUse();
    for (std::uint64_t i = 1; i <= 2500; ++i) ASSERT_TRUE(table.Remove(i * 16, &scratch));
    const std::uint64_t other = (static_cast<std::uint64_t>(round) + 1)
                                << 32;  // keys never used before
    for (std::uint64_t i = 1; i <= 2500; ++i) {
      ASSERT_EQ(table.Insert(other + i, {2, 0, i, 1, 0}, &scratch),
                LiveTable::InsertResult::kInserted);
    }
    for (std::uint64_t i = 1; i <= 2500; ++i) ASSERT_TRUE(table.Remove(other + i, &scratch));
    for (std::uint64_t i = 1; i <= 2500; ++i) table.Insert(i * 16, {1, 0, i, 1, 0}, &scratch);
  }
  EXPECT_LE(memory.BytesInUse(), in_use);  // churn reuses records; rehashes may shrink the index
  EXPECT_EQ(table.size(), 5000u);
  std::size_t visited = 0;
  table.ForEach([&](std::uint64_t key, const LiveObject& o) {
    ++visited;
    EXPECT_EQ(o.size * 16, key);
  });
  EXPECT_EQ(visited, 5000u);
}

TEST(LiveTableTest, OutOfMemoryLeavesTheTableWhole) {
  FailingMemoryResource memory;
  LiveTable table(memory);
  LiveObject scratch;
  std::uint64_t key = 16;
  // Insert until an insert needs memory (a new chunk or a larger index) and fails.
  for (int i = 0; i < 2000; ++i, key += 16) {
    ASSERT_EQ(table.Insert(key, {1, 0, key, 1, 0}, &scratch), LiveTable::InsertResult::kInserted);
  }
  memory.fail = true;
  std::size_t inserted = 2000;
  LiveTable::InsertResult result;
  while ((result = table.Insert(key, {1, 0, key, 1, 0}, &scratch)) ==
         LiveTable::InsertResult::kInserted) {
    ++inserted;
    key += 16;
  }
  EXPECT_EQ(result, LiveTable::InsertResult::kOutOfMemory);
  EXPECT_EQ(table.size(), inserted);
  LiveObject removed;
  EXPECT_FALSE(table.Remove(key, &removed));  // the failed key is not there
  ASSERT_TRUE(table.Remove(16, &removed));    // the first is
  EXPECT_EQ(removed.size, 16u);
  memory.fail = false;
  EXPECT_EQ(table.Insert(key, {1, 0, key, 1, 0}, &scratch), LiveTable::InsertResult::kInserted);
  std::size_t visited = 0;
  table.ForEach([&](std::uint64_t k, const LiveObject& o) {
    ++visited;
    EXPECT_EQ(o.size, k);
  });
  EXPECT_EQ(visited, inserted);
}

TEST(LiveTableTest, HandlesFindTheirObjectsWithoutTheIndexOrTheFilter) {
  // 30,000 objects by handle beside 1,000 by key, churned: every handle removes exactly its own
  // object, a stale handle (its record freed, or reused for another key) removes nothing, the
  // filter never hears of handled keys, and ForEach and size() see both kinds.
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject scratch;
  std::map<std::uint64_t, std::uint32_t> handle_of;  // live handled key -> handle
  std::vector<std::pair<std::uint64_t, std::uint32_t>> stale;
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 120000; ++i) {
    x = Xorshift(x);
    std::uint64_t key = (x % 30000 + 1) * 16;
    auto it = handle_of.find(key);
    if (it != handle_of.end()) {
      LiveObject removed;
      ASSERT_TRUE(table.RemoveByHandle(it->second, key, &removed));
      EXPECT_EQ(removed.size, key);
      if (stale.size() < 1000) stale.emplace_back(key, it->second);
      handle_of.erase(it);
    } else {
      std::uint32_t handle = 0;
      ASSERT_TRUE(table.InsertWithHandle(key, {2, 0, key, 1, 0}, Lane(key), &handle));
      ASSERT_NE(handle, 0u);
      handle_of[key] = handle;
    }
  }
  // No handled key ever reached the filter (a counting filter: before any key did, it says no).
  for (const auto& [key, handle] : handle_of) ASSERT_FALSE(table.MayContain(key)) << key;
  for (std::uint64_t k = 1; k <= 1000; ++k) {
    ASSERT_EQ(table.Insert(k << 40, {1, 0, k << 40, 1, 0}, &scratch),
              LiveTable::InsertResult::kInserted);
  }
  for (const auto& [key, handle] : stale) {
    if (handle_of.count(key) != 0) continue;  // live again under another handle
    EXPECT_FALSE(table.RemoveByHandle(handle, key, &scratch)) << "stale handle of " << key;
  }
  EXPECT_FALSE(table.RemoveByHandle(0, 16, &scratch));
  EXPECT_FALSE(table.RemoveByHandle(0xffffffffu, 16, &scratch));
  EXPECT_EQ(table.size(), 1000 + handle_of.size());
  std::size_t by_key = 0, by_handle = 0;
  table.ForEach([&](std::uint64_t key, const LiveObject& o) {
    EXPECT_EQ(o.size, key);
    if (o.stack == 1) {
      ++by_key;
    } else {
      ++by_handle;
      EXPECT_EQ(handle_of.count(key), 1u) << key;
    }
  });
  EXPECT_EQ(by_key, 1000u);
  EXPECT_EQ(by_handle, handle_of.size());
  // Handled keys are nowhere in the index: removing one by key finds nothing.
  ASSERT_FALSE(handle_of.empty());
  EXPECT_FALSE(table.Remove(handle_of.begin()->first, &scratch));
}

TEST(LiveTableTest, DroppedHandlesFreeTheirPositionsWithoutTheirRecords) {
  // Drops by handle, which read no record, interleaved with removals by handle, which do, and with
  // ForEach: the live set stays exact, and dropped positions are reused (the records take no more
  // memory however long the churn goes on).
  SystemMemoryResource memory;
  LiveTable table(memory);
  std::map<std::uint64_t, std::uint32_t> handle_of;
  std::uint64_t x = 2463534242ull;
  std::size_t in_use = 0;
  for (int i = 0; i < 200000; ++i) {
    if (i == 100000) in_use = memory.BytesInUse();
    x = Xorshift(x);
    std::uint64_t key = (x % 20000 + 1) * 16;
    auto it = handle_of.find(key);
    if (it == handle_of.end()) {
      std::uint32_t handle = 0;
      ASSERT_TRUE(table.InsertWithHandle(key, {3, 0, key, 1, 0}, Lane(key), &handle));
      handle_of[key] = handle;
    } else if (x % 7 == 0) {
      LiveObject removed;
      ASSERT_TRUE(table.RemoveByHandle(it->second, key, &removed));
      EXPECT_EQ(removed.size, key);
      handle_of.erase(it);
    } else {
      ASSERT_TRUE(table.DropByHandle(it->second, key));
      handle_of.erase(it);
    }
    if (i % 50000 == 0) {
      std::size_t seen = 0;
      table.ForEach([&](std::uint64_t k, const LiveObject& o) {
        ++seen;
        EXPECT_EQ(o.size, k);
        EXPECT_EQ(handle_of.count(k), 1u) << k;
      });
      EXPECT_EQ(seen, handle_of.size());
    }
  }
  EXPECT_EQ(table.size(), handle_of.size());
  EXPECT_LE(memory.BytesInUse(), in_use);
  // A dropped handle reads as gone to a removal by handle (its key is not the record's any more).
  auto [key, handle] = *handle_of.begin();
  ASSERT_TRUE(table.DropByHandle(handle, key));
  LiveObject scratch;
  EXPECT_FALSE(table.RemoveByHandle(handle, key, &scratch));
}

TEST(LiveTableTest, HandlesFromBeforeRemoveAllFindNothingAfterIt) {
  // A block sampled before a detach (RemoveAll) and freed after it: its handle must neither drop
  // nor remove the object that took its place.
  SystemMemoryResource memory;
  LiveTable table(memory);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> before;
  for (std::uint64_t k = 1; k <= 2000; ++k) {
    std::uint32_t handle;
    ASSERT_TRUE(table.InsertWithHandle(k * 16, {1, 0, k, 1, 0}, Lane(k), &handle));
    before.emplace_back(k * 16, handle);
  }
  for (std::size_t i = 0; i < before.size(); i += 2) {  // half are freed before the detach
    ASSERT_TRUE(table.DropByHandle(before[i].second, before[i].first));
  }
  std::size_t gone = 0;
  table.RemoveAll([&](const LiveObject&) { ++gone; });
  EXPECT_EQ(gone, 1000u);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> after;
  for (std::uint64_t k = 1; k <= 2000; ++k) {  // the same keys again, as glibc would hand them out
    std::uint32_t handle;
    ASSERT_TRUE(table.InsertWithHandle(k * 16, {2, 0, k, 1, 0}, Lane(k), &handle));
    after.emplace_back(k * 16, handle);
  }
  LiveObject scratch;
  for (const auto& [key, handle] : before) {
    EXPECT_FALSE(table.DropByHandle(handle, key));
    EXPECT_FALSE(table.RemoveByHandle(handle, key, &scratch));
  }
  EXPECT_EQ(table.size(), 2000u);
  for (const auto& [key, handle] : after) ASSERT_TRUE(table.DropByHandle(handle, key));
  EXPECT_EQ(table.size(), 0u);
}

TEST(LiveTableTest, RemoveAllEmptiesBothKindsAndReportsEachObject) {
  SystemMemoryResource memory;
  LiveTable table(memory);
  LiveObject scratch;
  std::vector<std::uint32_t> handles;
  for (std::uint64_t k = 1; k <= 3000; ++k) {
    table.Insert(k * 16, {1, 0, 1, 1, 0}, &scratch);
    std::uint32_t handle;
    ASSERT_TRUE(table.InsertWithHandle((k << 32) + 16, {2, 0, 2, 1, 0}, Lane(k), &handle));
    handles.push_back(handle);
  }
  std::map<StackId, std::size_t> gone;
  table.RemoveAll([&](const LiveObject& o) { ++gone[o.stack]; });
  EXPECT_EQ(gone[1], 3000u);
  EXPECT_EQ(gone[2], 3000u);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_FALSE(table.MayContain(16));
  EXPECT_FALSE(table.Remove(16, &scratch));
  EXPECT_FALSE(table.RemoveByHandle(handles[0], (1ull << 32) + 16, &scratch));
  EXPECT_FALSE(table.DropByHandle(handles[1], (2ull << 32) + 16));
  // And the table works as before afterwards.
  EXPECT_EQ(table.Insert(16, {1, 0, 1, 1, 0}, &scratch), LiveTable::InsertResult::kInserted);
  EXPECT_EQ(table.size(), 1u);
}

TEST(SampledKeyFilterTest, SaturatedCountersStayMaybe) {
  SystemMemoryResource memory;
  SampledKeyFilter filter(memory);
  // 300 inserts of one key saturate its counter at 255; removing them all cannot prove absence.
  for (int i = 0; i < 300; ++i) filter.Insert(0x40);
  for (int i = 0; i < 300; ++i) filter.Remove(0x40);
  EXPECT_TRUE(filter.MayContain(0x40));
  // An unsaturated counter returns to zero.
  SampledKeyFilter fresh(memory);
  fresh.Insert(0x80);
  fresh.Insert(0x80);
  fresh.Remove(0x80);
  EXPECT_TRUE(fresh.MayContain(0x80));
  fresh.Remove(0x80);
  EXPECT_FALSE(fresh.MayContain(0x80));
}

// The filter's counters are allocated by its first insert: a table used only by handle (the preload
// library over glibc) never pays for them, and a key the filter could not take is refused by the
// table (free() would never ask about it).
TEST(SampledKeyFilterTest, CountersComeWithTheFirstInsert) {
  FailingMemoryResource memory;
  {
    LiveTable table(memory);
    std::uint32_t handle;
    ASSERT_TRUE(table.InsertWithHandle(0x100, {1, 0, 8, 1, 0}, 0, &handle));
    const std::size_t handled_only = memory.BytesInUse();
    EXPECT_FALSE(table.MayContain(0x200));
    memory.fail = true;
    LiveObject scratch;
    EXPECT_EQ(table.Insert(0x200, {1, 0, 8, 1, 0}, &scratch),
              LiveTable::InsertResult::kOutOfMemory);
    memory.fail = false;
    EXPECT_EQ(table.size(), 1u);
    ASSERT_EQ(table.Insert(0x200, {1, 0, 8, 1, 0}, &scratch), LiveTable::InsertResult::kInserted);
    EXPECT_TRUE(table.MayContain(0x200));
    EXPECT_GE(memory.BytesInUse(), handled_only + 65536);
  }
  EXPECT_EQ(memory.BytesInUse(), 0u);
}

}  // namespace
}  // namespace heaprec
