// HeapSnapshot as a front end uses it: copied object by object, every object carries the key it was
// recorded under and a tag (0 until the front end sets one), the copy can be edited and truncated
// in place (Truncate never grows it), and SortByStackAndSize orders objects by (stack, size, tag)
// so the writer can make one sample per group. Copied by site, every (stack, size, generation) is
// one entry with the count, summed weight and oldest time of its objects, in memory that follows
// the sites, not the objects.
#include "core/heap_snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "failing_memory.h"

namespace heaprec {
namespace {

class HeapSnapshotTest : public ::testing::Test {
 protected:
  SystemMemoryResource memory_;
  HeapRecorder recorder_{memory_, RecorderOptions{}};
};

TEST_F(HeapSnapshotTest, ObjectsCarryTheirRecordedKeysAndTagZero) {
  // Keys anywhere in the non-reserved range, including the largest one and an odd one (a runtime
  // object id need not look like an address). Each key gets its own size so a key paired with the
  // wrong object is detected, not only a missing key.
  std::map<std::uint64_t, std::uint64_t> size_of;
  std::uint64_t stack_a[] = {0xa1, 0xa2}, stack_b[] = {0xb1};
  for (std::uint64_t i = 1; i <= 200; ++i) size_of[i * 16] = i;
  size_of[1] = 1000;
  size_of[0x123456789abcdef1] = 1001;
  size_of[UINT64_MAX - 1] = 1002;
  bool on_a = false;
  for (const auto& [key, size] : size_of) {
    on_a = !on_a;
    recorder_.Record(key, on_a ? stack_a : stack_b, on_a ? 2 : 1, size, 1.0, 0);
  }
  // Forgotten keys must not appear.
  for (std::uint64_t i = 1; i <= 200; i += 3) {
    ASSERT_TRUE(recorder_.Forget(i * 16));
    size_of.erase(i * 16);
  }

  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder_, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.object_count(), size_of.size());
  std::set<std::uint64_t> seen;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    ASSERT_TRUE(size_of.count(o.key)) << std::hex << o.key;
    EXPECT_EQ(o.size, size_of[o.key]) << std::hex << o.key;
    EXPECT_EQ(o.tag, 0u) << std::hex << o.key;
    EXPECT_TRUE(seen.insert(o.key).second) << "key twice: " << std::hex << o.key;
  }

  // Sorting moves whole objects: keys still pair with their sizes afterwards.
  snapshot.SortByStackAndSize();
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    EXPECT_EQ(o.size, size_of.at(o.key)) << std::hex << o.key;
  }
}

TEST_F(HeapSnapshotTest, TruncateOnlyShrinks) {
  std::uint64_t stack[] = {1};
  for (std::uint64_t key = 16; key <= 16 * 5; key += 16) recorder_.Record(key, stack, 1, 8, 1, 0);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder_, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.object_count(), 5u);
  EXPECT_EQ(snapshot.mutable_objects(), snapshot.objects());

  snapshot.Truncate(10);  // larger than the count: nothing (the extra slots hold no objects)
  EXPECT_EQ(snapshot.object_count(), 5u);
  snapshot.Truncate(5);
  EXPECT_EQ(snapshot.object_count(), 5u);
  snapshot.Truncate(3);
  EXPECT_EQ(snapshot.object_count(), 3u);
  snapshot.Truncate(4);  // cannot grow back, even within the original count
  EXPECT_EQ(snapshot.object_count(), 3u);
  snapshot.Truncate(0);
  EXPECT_EQ(snapshot.object_count(), 0u);
  snapshot.Release();

  // A fresh Take after truncating sees the whole live set again.
  ASSERT_TRUE(snapshot.Take(recorder_, SnapshotGrouping::kEachObject));
  EXPECT_EQ(snapshot.object_count(), 5u);
}

TEST_F(HeapSnapshotTest, FrontEndCompactsAndRetagsInPlace) {
  // The pattern a runtime front end follows: drop the objects it found dead by moving survivors to
  // the front, truncate, set tags and sizes, then sort.
  std::uint64_t stack[] = {7, 8};
  for (std::uint64_t key = 1; key <= 10; ++key) recorder_.Record(key, stack, 2, 8, 1, 0);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder_, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.object_count(), 10u);
  HeapSnapshot::Object* objects = snapshot.mutable_objects();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    if (objects[i].key % 2 != 0) continue;  // odd keys are "dead"
    objects[kept] = objects[i];
    objects[kept].tag = objects[kept].key * 100;
    objects[kept].size = objects[kept].key;
    ++kept;
  }
  snapshot.Truncate(kept);
  snapshot.SortByStackAndSize();
  ASSERT_EQ(snapshot.object_count(), 5u);
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    EXPECT_EQ(o.key, 2 * (i + 1));  // sorted by size, which is the key
    EXPECT_EQ(o.tag, o.key * 100);
  }
}

TEST_F(HeapSnapshotTest, SortOrderIsStackThenSizeThenTag) {
  // Two stacks x two sizes x three tags, two objects each, with tags assigned so that the tag order
  // contradicts the size order: a sort that compared tags before sizes (or ignored them) fails.
  std::uint64_t stack_a[] = {0xa}, stack_b[] = {0xb};
  std::uint64_t key = 16;
  for (int copy = 0; copy < 2; ++copy) {
    for (std::uint64_t* stack : {stack_a, stack_b}) {
      for (std::uint64_t size : {64, 32}) {
        for (int t = 0; t < 3; ++t) recorder_.Record(key += 16, stack, 1, size, 1, 0);
      }
    }
  }
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder_, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.object_count(), 24u);
  std::map<std::uint64_t, std::uint64_t> tag_of;  // key -> tag, to check objects move whole
  HeapSnapshot::Object* objects = snapshot.mutable_objects();
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    // Larger sizes get smaller tags; the key spreads tags over 3 values.
    objects[i].tag = (objects[i].size == 64 ? 0 : 10) + (objects[i].key / 16) % 3;
    tag_of[objects[i].key] = objects[i].tag;
  }
  snapshot.SortByStackAndSize();

  auto order = [](const HeapSnapshot::Object& o) { return std::tuple(o.stack, o.size, o.tag); };
  std::set<std::tuple<StackId, std::uint64_t, std::uint64_t>> groups;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    EXPECT_EQ(o.tag, tag_of.at(o.key));
    groups.insert(order(o));
    if (i > 0) {
      EXPECT_LE(order(snapshot.objects()[i - 1]), order(o)) << "at " << i;
    }
  }
  // Sortedness makes each group contiguous; all 2 stacks x 2 sizes x 3 tags must be there.
  EXPECT_EQ(groups.size(), 12u);
  // The first object has the smaller size, 32, although 64's tags are smaller: size before tag.
  EXPECT_EQ(snapshot.objects()[0].size, 32u);
  EXPECT_EQ(snapshot.objects()[0].tag, 10u);
}

// What a by-site entry must hold, computed from an object-by-object copy.
struct Site {
  std::uint64_t count = 0;
  double weight = 0;
  std::uint64_t oldest = 0;  // the smallest non-zero time
};
using SiteKey = std::tuple<StackId, std::uint64_t, std::uint32_t>;  // stack, size, generation

std::map<SiteKey, Site> SitesOf(const HeapSnapshot& snapshot) {
  std::map<SiteKey, Site> sites;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    Site& site = sites[{o.stack, o.size, o.generation}];
    site.count += o.count;
    site.weight += o.weight;
    if (o.alloc_time_ns != 0 && (site.oldest == 0 || o.alloc_time_ns < site.oldest))
      site.oldest = o.alloc_time_ns;
  }
  return sites;
}

TEST_F(HeapSnapshotTest, BySiteHoldsWhatEachObjectSumsTo) {
  // 60,000 objects over 3 stacks x 1,500 sizes x 2 generations (more sites than the first index
  // holds, so it grows while shards are copied), weights of 1-4, some times 0 (a front end without
  // a clock), then a third forgotten: each site's count, weight and oldest time must be what the
  // object-by-object copy of the same live set sums to.
  std::mt19937_64 random(26);
  std::uint64_t stacks[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  for (std::uint64_t key = 16; key <= 16 * 60000; key += 16) {
    std::uint64_t* stack = stacks[random() % 3];
    std::uint64_t size = 1 + random() % 1500;
    double weight = 1.0 + static_cast<double>(random() % 4);
    std::uint64_t time = random() % 5 == 0 ? 0 : 1000 + random() % 100000;
    recorder_.Record(key, stack, 2, size, weight, time, static_cast<std::uint32_t>(random() % 2));
  }
  for (std::uint64_t key = 16; key <= 16 * 60000; key += 48) ASSERT_TRUE(recorder_.Forget(key));

  HeapSnapshot each, by_site;
  ASSERT_TRUE(each.Take(recorder_, SnapshotGrouping::kEachObject));
  ASSERT_TRUE(by_site.Take(recorder_, SnapshotGrouping::kBySite));
  std::map<SiteKey, Site> expected = SitesOf(each);
  ASSERT_GT(expected.size(), 4000u);
  ASSERT_EQ(by_site.object_count(), expected.size());  // one entry per site, no site twice
  EXPECT_EQ(by_site.sampled_objects(), each.object_count());
  EXPECT_EQ(by_site.sampled_objects(), 40000u);
  for (std::size_t i = 0; i < by_site.object_count(); ++i) {
    const HeapSnapshot::Object& o = by_site.objects()[i];
    SCOPED_TRACE(testing::Message() << "stack " << o.stack << " size " << o.size);
    auto it = expected.find({o.stack, o.size, o.generation});
    ASSERT_NE(it, expected.end());
    EXPECT_EQ(o.key, 0u);
    EXPECT_EQ(o.tag, 0u);
    EXPECT_EQ(o.count, it->second.count);
    EXPECT_EQ(o.weight, it->second.weight);  // small integers: exact in any order
    EXPECT_EQ(o.alloc_time_ns, it->second.oldest);
  }
}

TEST_F(HeapSnapshotTest, BySiteMemoryFollowsTheSitesNotTheObjects) {
  // 200,000 live objects from 10 sites: an object-by-object copy holds 56 bytes per object (about
  // 11 MB), a by-site one its first 1,024 entries (57 KB) and the history (10 entries and a quarter
  // more room, for the next copy of a growing history).
  std::uint64_t stack[] = {9};
  for (std::uint64_t key = 16; key <= 16 * 200000; key += 16) {
    recorder_.Record(key, stack, 1, 16 + (key / 16) % 10, 1.0, key);
  }
  HeapSnapshot each, by_site;
  ASSERT_TRUE(each.Take(recorder_, SnapshotGrouping::kEachObject));
  ASSERT_TRUE(by_site.Take(recorder_, SnapshotGrouping::kBySite));
  EXPECT_GE(each.bytes(), 200000 * sizeof(HeapSnapshot::Object));
  constexpr std::size_t kHistoryRoom = 10 + 10 / 4;
  EXPECT_LE(by_site.bytes(),
            1024 * sizeof(HeapSnapshot::Object) + kHistoryRoom * sizeof(AllocationTotals));
  EXPECT_EQ(by_site.object_count(), 10u);
  EXPECT_EQ(by_site.sampled_objects(), 200000u);
  // The index used while copying is gone with the copy: what is left is the entries and history.
  std::size_t in_use = memory_.BytesInUse();
  by_site.Release();
  EXPECT_EQ(in_use - memory_.BytesInUse(),
            1024 * sizeof(HeapSnapshot::Object) + kHistoryRoom * sizeof(AllocationTotals));
}

TEST(HeapSnapshotTakenAgain, KeepsItsArraysAndCopiesAfresh) {
  // The peak copy is taken again at every 10% of growth: the second Take must reuse its arrays and
  // hold exactly what the recorder holds now, nothing of the first copy. Memory allows it one
  // allocation: the index it uses while copying (a copy into new arrays needs three).
  FailingMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  std::uint64_t stack_a[] = {0xa1}, stack_b[] = {0xb1, 0xb2};
  auto record = [&](std::uint64_t key) {
    recorder.Record(key, key % 32 == 0 ? stack_a : stack_b, key % 32 == 0 ? 1 : 2, 24, 1.0, key);
  };
  for (std::uint64_t key = 16; key <= 16 * 100; key += 16) record(key);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder, SnapshotGrouping::kBySite));
  EXPECT_EQ(snapshot.object_count(), 2u);
  EXPECT_EQ(snapshot.sampled_objects(), 100u);
  const std::size_t history = snapshot.history_count();
  // Half of them freed, as many new ones at the same sites.
  for (std::uint64_t key = 16; key <= 16 * 50; key += 16) recorder.Forget(key);
  for (std::uint64_t key = 16 * 101; key <= 16 * 150; key += 16) record(key);
  memory.succeed_next = 1;
  ASSERT_TRUE(snapshot.Take(recorder, SnapshotGrouping::kBySite));
  memory.succeed_next = -1;
  EXPECT_EQ(snapshot.object_count(), 2u);
  EXPECT_EQ(snapshot.sampled_objects(), 100u);
  EXPECT_EQ(snapshot.history_count(), history);
  double weight = 0;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) weight += snapshot.objects()[i].weight;
  EXPECT_DOUBLE_EQ(weight, 100.0);
  // Taken from another recorder, it lets the first go and copies the second.
  HeapRecorder other(memory, RecorderOptions{});
  other.Record(16, stack_a, 1, 8, 1.0, 1);
  ASSERT_TRUE(snapshot.Take(other, SnapshotGrouping::kBySite));
  EXPECT_EQ(snapshot.object_count(), 1u);
  EXPECT_EQ(snapshot.sampled_objects(), 1u);
  snapshot.Release();
}

TEST(HeapSnapshotOutOfMemory, ATakeThatRunsOutHoldsNothing) {
  // 3,000 sites: a by-site copy grows its entries and its index twice while the shards are copied.
  // Memory that runs out at each allocation in turn must leave nothing held and nothing pinned.
  FailingMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  std::uint64_t stack[] = {1};
  for (std::uint64_t key = 16; key <= 16 * 3000; key += 16)
    recorder.Record(key, stack, 1, key, 1, 0);
  for (SnapshotGrouping grouping : {SnapshotGrouping::kBySite, SnapshotGrouping::kEachObject}) {
    int failures = 0;
    for (long succeed = 0; succeed < 12; ++succeed) {
      std::size_t before = memory.BytesInUse();
      HeapSnapshot snapshot;
      memory.succeed_next = succeed;
      bool taken = snapshot.Take(recorder, grouping);
      memory.succeed_next = -1;
      if (taken) {
        EXPECT_EQ(snapshot.sampled_objects(), 3000u);
        continue;
      }
      ++failures;
      EXPECT_EQ(snapshot.object_count(), 0u);
      EXPECT_EQ(memory.BytesInUse(), before) << "after " << succeed << " allocations";
    }
    // The history's copy, then the entries (and for kBySite the index and two growths of each).
    EXPECT_GE(failures, grouping == SnapshotGrouping::kBySite ? 5 : 2);
    // A copy after the failures sees the whole live set.
    HeapSnapshot snapshot;
    ASSERT_TRUE(snapshot.Take(recorder, grouping));
    EXPECT_EQ(snapshot.sampled_objects(), 3000u);
  }
}

}  // namespace
}  // namespace heaprec
