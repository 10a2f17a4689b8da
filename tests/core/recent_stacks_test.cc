#include "core/recent_stacks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace heaprec {
namespace {

class RecentStacksTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kEntries = 16, kRing = 64;
  void SetUp() override { table_.Attach(entries_.data(), kEntries, ring_.data(), kRing); }

  std::vector<RecentStacks::Entry> entries_ = std::vector<RecentStacks::Entry>(kEntries);
  std::vector<std::uint64_t> ring_ = std::vector<std::uint64_t>(kRing, 0xdead);
  RecentStacks table_;
};

TEST_F(RecentStacksTest, FindsWhatWasRememberedUnderTheSameEpochOnly) {
  std::uint64_t stack[] = {0x401000, 0x402000, 0x403000};
  const std::uint64_t hash = RecentStacks::Hash(stack, 3);
  EXPECT_EQ(table_.Find(stack, 3, 1).id, 0u);  // empty
  table_.Remember(hash, 42, stack, 3, 1);
  EXPECT_EQ(table_.Find(stack, 3, 1).id, 42u);
  EXPECT_EQ(table_.Find(stack, 3, 2).id, 0u);  // ids of another epoch may be recycled
  EXPECT_EQ(table_.Find(stack, 3, 1).hash, hash);
  EXPECT_EQ(table_.Find(stack, 2, 1).id, 0u);  // the same frames, fewer
  std::uint64_t other[] = {0x401000, 0x402000, 0x403001};
  // The entry found last is tried first, by its frames: another stack of its depth misses.
  EXPECT_EQ(table_.Find(other, 3, 1).id, 0u);
}

// The ring holds 64 frames: a stack is found while fewer than a ring's worth were written after
// it, never from a copy partly written over, and again once remembered again.
TEST_F(RecentStacksTest, CopiesWrittenOverByTheRingMiss) {
  std::uint64_t first[10];
  for (std::uint64_t i = 0; i < 10; ++i) first[i] = 0x1000 + i;
  const std::uint64_t first_hash = RecentStacks::Hash(first, 10);
  table_.Remember(first_hash, 1, first, 10, 1);
  // Stacks of 8 frames, whose entries are not the first's: 48 more frames fit before the ring's
  // end, and the first copy is found after each.
  std::uint32_t id = 2;
  std::uint64_t written = 10;
  for (std::uint64_t n = 0; written + 8 <= kRing; ++n) {
    std::uint64_t other[8];
    for (std::uint64_t i = 0; i < 8; ++i) other[i] = 0x900000 + n * 16 + i;
    const std::uint64_t hash = RecentStacks::Hash(other, 8);
    if ((hash & (kEntries - 1)) == (first_hash & (kEntries - 1))) continue;
    table_.Remember(hash, id++, other, 8, 1);
    written += 8;
    EXPECT_EQ(table_.Find(first, 10, 1).id, 1u) << written;
  }
  ASSERT_EQ(written, 58u);
  // The next copy does not fit in the ring's last 6 frames: it skips them and starts again at 0,
  // over the first copy, which is then gone.
  std::uint64_t last[8];
  std::uint64_t hash = 0;
  for (std::uint64_t n = 1000;; ++n) {
    for (std::uint64_t i = 0; i < 8; ++i) last[i] = 0x700000 + n * 16 + i;
    hash = RecentStacks::Hash(last, 8);
    if ((hash & (kEntries - 1)) != (first_hash & (kEntries - 1))) break;
  }
  table_.Remember(hash, 99, last, 8, 1);
  EXPECT_EQ(table_.Find(first, 10, 1).id, 0u);
  EXPECT_EQ(table_.Find(last, 8, 1).id, 99u);
  EXPECT_EQ(ring_[0], last[0]);  // the copy never wraps: it starts at the ring's start
  for (std::size_t i = 58; i < kRing; ++i) EXPECT_EQ(ring_[i], 0xdeadu) << i;  // skipped
  table_.Remember(first_hash, 1, first, 10, 1);
  EXPECT_EQ(table_.Find(first, 10, 1).id, 1u);
}

// The table is indexed by the hash's low bits: distinct stacks get distinct hashes, spread over
// the entries, whether they differ in their leaf, their root or the order of their frames.
TEST(RecentStacksHashTest, SpreadsStacksThatDifferAnywhere) {
  std::mt19937_64 random(7);
  std::set<std::uint64_t> hashes;
  std::set<std::vector<std::uint64_t>> stacks;
  constexpr int kBuckets = 256, kStacks = 64 * kBuckets;
  std::vector<int> buckets(kBuckets);
  const std::uint64_t base = 0x55555555a000;
  for (int s = 0; s < kStacks; ++s) {
    std::uint64_t frames[40];
    const std::uint32_t depth = 1 + s % 40;
    for (std::uint32_t i = 0; i < depth; ++i) frames[i] = base + (random() & 0xffff0);
    const std::uint64_t hash = RecentStacks::Hash(frames, depth);
    hashes.insert(hash);
    stacks.emplace(frames, frames + depth);
    ++buckets[hash & (kBuckets - 1)];
    if (depth >= 2) {  // the same frames, two swapped
      std::swap(frames[0], frames[depth - 1]);
      if (frames[0] != frames[depth - 1]) {
        EXPECT_NE(RecentStacks::Hash(frames, depth), hash);
      }
    }
  }
  EXPECT_EQ(hashes.size(), stacks.size());
  EXPECT_GT(stacks.size(), kStacks * 99 / 100);
  // 64 per bucket on average; a binomial count beyond 6 standard deviations (48) has a chance of
  // about 1e-9 per bucket.
  const double mean = static_cast<double>(kStacks) / kBuckets;
  const double sigma = std::sqrt(mean * (1 - 1.0 / kBuckets));
  for (int b = 0; b < kBuckets; ++b) {
    EXPECT_LT(std::abs(buckets[b] - mean), 6 * sigma) << b;
  }
  // Equal frames in every chain do not cancel out.
  std::uint64_t same[8] = {base, base, base, base, base, base, base, base};
  EXPECT_NE(RecentStacks::Hash(same, 8), RecentStacks::Hash(same, 4));
  EXPECT_NE(RecentStacks::Hash(same, 4), RecentStacks::Hash(same, 0));
}

}  // namespace
}  // namespace heaprec
