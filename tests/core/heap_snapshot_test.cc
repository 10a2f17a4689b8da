// HeapSnapshot as a front end uses it: every object carries the key it was recorded under and a
// tag (0 until the front end sets one), the copy can be edited and truncated in place (Truncate
// never grows it), and SortByStackAndSize orders objects by (stack, size, tag) so the writer can
// make one sample per group.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "core/heap_recorder.h"

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
  ASSERT_TRUE(snapshot.Take(recorder_));
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
  ASSERT_TRUE(snapshot.Take(recorder_));
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
  ASSERT_TRUE(snapshot.Take(recorder_));
  EXPECT_EQ(snapshot.object_count(), 5u);
}

TEST_F(HeapSnapshotTest, FrontEndCompactsAndRetagsInPlace) {
  // The pattern a runtime front end follows: drop the objects it found dead by moving survivors to
  // the front, truncate, set tags and sizes, then sort.
  std::uint64_t stack[] = {7, 8};
  for (std::uint64_t key = 1; key <= 10; ++key) recorder_.Record(key, stack, 2, 8, 1, 0);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder_));
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
  ASSERT_TRUE(snapshot.Take(recorder_));
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

}  // namespace
}  // namespace heaprec
