// AllocationHistory on its own: batches merged into (stack, size, tag) entries, checked against a
// plain map, through the table's growth and batches longer than the slots it fetches ahead at once.
#include "core/allocation_history.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace heaprec {
namespace {

using Key = std::tuple<StackId, std::uint64_t, std::uint32_t>;  // stack, size, tag

struct Expected {
  double objects = 0, bytes = 0;
  std::uint32_t temporary = 0;
};

// Refuses every allocation: the history cannot make its table.
class NoMemory final : public MemoryResource {
 public:
  void* Allocate(std::size_t) override { return nullptr; }
  void Deallocate(void*, std::size_t) override {}
  std::size_t BytesInUse() const override { return 0; }
};

TEST(AllocationHistoryTest, MergesEveryBatchIntoItsKeysEntry) {
  SystemMemoryResource memory;
  AllocationHistory history(memory);
  std::map<Key, Expected> expected;
  std::map<StackId, int> new_entries;  // new_entry calls per stack
  std::mt19937_64 random(7);
  // Keys that differ in one field only (the same stack and size under two tags, the same size on
  // neighbouring stacks, sizes a power of two apart) and repeats, in batches of 1 to 100 adds.
  for (int batch = 0; batch < 400; ++batch) {
    std::vector<AllocationTotals> adds(1 + random() % 100);
    for (AllocationTotals& add : adds) {
      const auto stack = static_cast<StackId>(1 + random() % 300);
      const std::uint64_t size = std::uint64_t{1} << (random() % 40);
      const auto tag = static_cast<std::uint32_t>(random() % 3);
      add = {stack, static_cast<std::uint32_t>(random() % 2), size, 0.5 + random() % 4, 0, tag};
      Expected& e = expected[{stack, size, tag}];
      e.objects += add.objects;
      e.bytes += add.objects * static_cast<double>(size);
      e.temporary += add.temporary;
    }
    history.Merge(
        adds.data(), adds.size(), [&](StackId stack) { ++new_entries[stack]; },
        [] { FAIL() << "an add was dropped with memory to spare"; });
  }
  const std::size_t keys = expected.size();
  ASSERT_EQ(history.size(), keys);
  std::vector<AllocationTotals> copied(keys + 1);
  ASSERT_EQ(history.CopyTo(copied.data(), copied.size()), keys);
  std::map<StackId, int> entries_per_stack;
  for (std::size_t i = 0; i < keys; ++i) {
    const AllocationTotals& got = copied[i];
    auto it = expected.find({got.stack, got.size, got.tag});
    ASSERT_NE(it, expected.end()) << "an entry no add made";
    EXPECT_EQ(got.objects, it->second.objects);
    EXPECT_EQ(got.bytes, it->second.bytes);
    EXPECT_EQ(got.temporary, it->second.temporary);
    expected.erase(it);  // each key once
    ++entries_per_stack[got.stack];
  }
  EXPECT_TRUE(expected.empty());
  EXPECT_EQ(new_entries, entries_per_stack);
}

TEST(AllocationHistoryTest, AddsWithoutATableAreDroppedAndCounted) {
  NoMemory memory;
  AllocationHistory history(memory);
  std::vector<AllocationTotals> adds(40, AllocationTotals{1, 0, 64, 1.0, 0, 0});
  int dropped = 0, created = 0;
  history.Merge(
      adds.data(), adds.size(), [&](StackId) { ++created; }, [&] { ++dropped; });
  EXPECT_EQ(dropped, 40);
  EXPECT_EQ(created, 0);
  EXPECT_EQ(history.size(), 0u);
}

}  // namespace
}  // namespace heaprec
