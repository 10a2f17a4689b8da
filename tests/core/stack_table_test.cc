#include "core/stack_table.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "failing_memory.h"

namespace heaprec {
namespace {

std::vector<std::uint64_t> Frames(std::uint64_t seed, std::uint32_t depth) {
  std::vector<std::uint64_t> f(depth);
  for (std::uint32_t i = 0; i < depth; ++i) f[i] = seed * 1000 + i;
  return f;
}

std::vector<std::uint64_t> Read(const StackTable& table, StackId id) {
  std::vector<std::uint64_t> f(table.Depth(id));
  f.resize(table.CopyFrames(id, f.data(), static_cast<std::uint32_t>(f.size())));
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
  EXPECT_EQ(Read(table, ia), a);
}

TEST(StackTableTest, UnrefIfNotLastNeverDropsTheLastReference) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Frames(1, 5);
  StackId id = table.Intern(a.data(), 5);
  table.Ref(id);
  EXPECT_TRUE(table.UnrefIfNotLast(id));  // 2 -> 1
  EXPECT_EQ(table.RefCount(id), 1u);
  EXPECT_FALSE(table.UnrefIfNotLast(id));  // the last: left to Unref under the lock
  EXPECT_EQ(table.RefCount(id), 1u);
  EXPECT_EQ(table.size(), 1u);
  table.Unref(id);
  EXPECT_EQ(table.size(), 0u);
}

TEST(StackTableTest, LockFreeUnrefsRaceLockedInternsAndUnrefs) {
  // Four threads intern (under a lock, as the recorder does) and drop references, most without
  // the lock; the counts come out exact and the stacks leave exactly when the last user goes.
  SystemMemoryResource memory;
  StackTable table(memory);
  std::mutex lock;
  auto a = Frames(7, 12), b = Frames(8, 12);
  StackId keep;
  {
    std::lock_guard<std::mutex> guard(lock);
    keep = table.Intern(a.data(), 12);  // a's reference held throughout, like the history's
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        const auto& frames = i % 3 == 0 ? b : a;
        StackId id;
        {
          std::lock_guard<std::mutex> guard(lock);
          id = table.Intern(frames.data(), 12);
        }
        if (!table.UnrefIfNotLast(id)) {
          std::lock_guard<std::mutex> guard(lock);
          table.Unref(id);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(table.RefCount(keep), 1u);
  EXPECT_EQ(table.size(), 1u);  // b's last user left: b is gone
  EXPECT_EQ(Read(table, keep), a);
  table.Unref(keep);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.node_count(), 0u);
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
  EXPECT_EQ(Read(table, ib), b);
  // `a` was interned last under that id: the recent-stacks table must not hand it out for `a`.
  StackId again = table.Intern(a.data(), 5);
  EXPECT_NE(again, ib);
  EXPECT_EQ(Read(table, again), a);
  EXPECT_EQ(Read(table, ib), b);
}

// The recent-stacks table keeps its entries' frames in a ring of 32768: interning 1000 stacks of
// depth 100 comes round it three times (and skips its end where a copy would not fit). Every
// stack found again must be the same id with the same frames, whether its copy is still intact
// (the last ~300) or was written over (the walk down the trie finds it).
TEST(StackTableTest, StacksInternedAgainAfterTheRecentRingWrapsKeepTheirIds) {
  SystemMemoryResource memory;
  StackTable table(memory);
  std::vector<std::vector<std::uint64_t>> stacks;
  std::vector<StackId> ids;
  for (std::uint64_t s = 0; s < 1000; ++s) {
    stacks.push_back(Frames(s + 1, 100));
    ids.push_back(table.Intern(stacks.back().data(), 100));
    ASSERT_NE(ids.back(), kInvalidStackId);
  }
  for (std::size_t round = 0; round < 2; ++round) {
    for (std::size_t s = 1000; s-- > 0;) {  // the newest first: intact copies, then overwritten
      EXPECT_EQ(table.Intern(stacks[s].data(), 100), ids[s]) << "stack " << s;
      EXPECT_EQ(Read(table, ids[s]), stacks[s]);
    }
  }
}

// Two stacks sharing their outer 3 frames: the second walk visits its own 2 frames and stops at
// the shared part; a node from the bound on is visited every time.
TEST(StackTableTest, ForEachFrameOnceVisitsSharedNodesOnce) {
  SystemMemoryResource memory;
  StackTable table(memory);
  const std::vector<std::uint64_t> a = {11, 12, 1, 2, 3}, b = {21, 22, 1, 2, 3};
  StackId ia = table.Intern(a.data(), 5), ib = table.Intern(b.data(), 5);
  const std::uint32_t bound = table.id_bound();
  std::vector<std::uint64_t> seen((bound + 63) / 64, 0), visited;
  auto collect = [&](std::uint64_t frame) {
    visited.push_back(frame);
    return true;
  };
  EXPECT_TRUE(table.ForEachFrameOnce(ia, seen.data(), bound, collect));
  EXPECT_EQ(visited, a);
  visited.clear();
  EXPECT_TRUE(table.ForEachFrameOnce(ib, seen.data(), bound, collect));
  EXPECT_EQ(visited, (std::vector<std::uint64_t>{21, 22}));
  visited.clear();
  EXPECT_TRUE(table.ForEachFrameOnce(ia, seen.data(), bound, collect));
  EXPECT_TRUE(visited.empty());
  // Interned after the bound was read: its new leaf is visited each time, up to the shared part.
  const std::vector<std::uint64_t> c = {31, 12, 1, 2, 3};
  StackId ic = table.Intern(c.data(), 5);
  for (int walk = 0; walk < 2; ++walk) {
    visited.clear();
    EXPECT_TRUE(table.ForEachFrameOnce(ic, seen.data(), bound, collect));
    EXPECT_EQ(visited, (std::vector<std::uint64_t>{31}));
  }
  // A visitor that fails ends the walk with false.
  std::vector<std::uint64_t> fresh((bound + 63) / 64, 0);
  EXPECT_FALSE(
      table.ForEachFrameOnce(ia, fresh.data(), bound, [](std::uint64_t) { return false; }));
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
  EXPECT_EQ(Read(table, ia), a);  // but the old frames are still readable
  table.Unpin();
  // Released at the last unpin: the next new node takes its id.
  auto b = Frames(9, 1);
  EXPECT_EQ(table.Intern(b.data(), 1), ia);
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
    ASSERT_EQ(Read(table, ids[i]), f);
    ASSERT_EQ(table.Intern(f.data(), static_cast<std::uint32_t>(f.size())), ids[i]);
    table.Unref(ids[i]);
    table.Unref(ids[i]);
  }
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.node_count(), 0u);
}

TEST(StackTableTest, EmptyStackIsAStack) {
  SystemMemoryResource memory;
  StackTable table(memory);
  StackId id = table.Intern(nullptr, 0);
  EXPECT_NE(id, kInvalidStackId);
  EXPECT_EQ(table.Intern(nullptr, 0), id);
  EXPECT_EQ(table.Depth(id), 0u);
  EXPECT_TRUE(Read(table, id).empty());
}

// Stacks leaf first, sharing their outer frames: `shared` frames common to all, then `own`.
std::vector<std::uint64_t> Branch(std::uint64_t leaf, std::uint32_t own, std::uint32_t shared) {
  std::vector<std::uint64_t> f;
  for (std::uint32_t i = 0; i < own; ++i) f.push_back(leaf * 1000 + i);
  for (std::uint32_t i = 0; i < shared; ++i) f.push_back(0xabc000 + i);
  return f;
}

TEST(StackTableTest, StacksSharingOuterFramesShareTheirNodes) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Branch(1, 1, 29), b = Branch(2, 1, 29), c = Branch(3, 5, 29);
  StackId ia = table.Intern(a.data(), 30);
  StackId ib = table.Intern(b.data(), 30);
  StackId ic = table.Intern(c.data(), 34);
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.node_count(), 29u + 1 + 1 + 5);  // the prefix once, then each stack's own
  EXPECT_EQ(Read(table, ia), a);
  EXPECT_EQ(Read(table, ib), b);
  EXPECT_EQ(Read(table, ic), c);
  EXPECT_EQ(table.Depth(ic), 34u);
  std::uint64_t innermost[3];
  ASSERT_EQ(table.CopyFrames(ic, innermost, 3), 3u);  // truncated to the innermost frames
  EXPECT_EQ(innermost[0], c[0]);
  EXPECT_EQ(innermost[2], c[2]);
}

TEST(StackTableTest, ReleasingAStackFreesOnlyWhatNoOtherStackUses) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Branch(1, 3, 20), b = Branch(2, 3, 20);
  StackId ia = table.Intern(a.data(), 23);
  StackId ib = table.Intern(b.data(), 23);
  EXPECT_EQ(table.node_count(), 26u);
  table.Unref(ia);
  EXPECT_EQ(table.node_count(), 23u);  // a's own three frames went; the shared prefix stays
  EXPECT_EQ(Read(table, ib), b);
  table.Unref(ib);
  EXPECT_EQ(table.node_count(), 0u);
  EXPECT_EQ(table.size(), 0u);
}

TEST(StackTableTest, AStackThatIsAnotherOnesPrefixLivesInsideIt) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto outer = Branch(0, 0, 10), inner = Branch(4, 2, 10);
  StackId io = table.Intern(outer.data(), 10);
  StackId ii = table.Intern(inner.data(), 12);
  EXPECT_EQ(table.node_count(), 12u);  // `outer` is a node on `inner`'s path
  EXPECT_EQ(Read(table, io), outer);
  table.Unref(io);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.node_count(), 12u);             // still `inner`'s prefix
  EXPECT_EQ(table.Intern(outer.data(), 10), io);  // and found again as a stack
  table.Unref(io);
  table.Unref(ii);
  EXPECT_EQ(table.node_count(), 0u);
}

TEST(StackTableTest, PinningKeepsSharedPrefixesUntilTheLastUnpin) {
  SystemMemoryResource memory;
  StackTable table(memory);
  auto a = Branch(1, 2, 15), b = Branch(2, 2, 15);
  StackId ia = table.Intern(a.data(), 17);
  StackId ib = table.Intern(b.data(), 17);
  table.Pin();
  table.Pin();
  table.Unref(ia);
  table.Unref(ib);
  EXPECT_EQ(table.size(), 0u);
  // Nothing is freed while pinned: both stacks read back whole, prefix included.
  EXPECT_EQ(Read(table, ia), a);
  EXPECT_EQ(Read(table, ib), b);
  // Interning `a` again makes a new leaf under the surviving prefix.
  StackId again = table.Intern(a.data(), 17);
  EXPECT_NE(again, ia);
  EXPECT_EQ(Read(table, again), a);
  table.Unpin();
  EXPECT_EQ(Read(table, ib), b);  // one pin is left
  table.Unpin();
  EXPECT_EQ(table.node_count(), 17u);  // only `again`'s path is left
  table.Unref(again);
  EXPECT_EQ(table.node_count(), 0u);
}

TEST(StackTableTest, OutOfMemoryMidStackUndoesThePartialPath) {
  FailingMemoryResource memory;
  StackTable table(memory);
  // Fill the first chunk of nodes (ids 0-4095; 0 is invalid, 1 the root) but two.
  std::vector<StackId> fillers;
  for (std::uint64_t i = 0; i < 4092; ++i) {
    std::uint64_t frame = 0x100000 + i;
    fillers.push_back(table.Intern(&frame, 1));
  }
  ASSERT_EQ(table.node_count(), 4092u);
  auto deep = Branch(7, 5, 0);
  memory.fail = true;  // two nodes fit, the third needs a new chunk
  EXPECT_EQ(table.Intern(deep.data(), 5), kInvalidStackId);
  EXPECT_EQ(table.node_count(), 4092u);
  EXPECT_EQ(table.size(), 4092u);
  std::uint64_t first = 0x100000;
  EXPECT_EQ(table.Intern(&first, 1), fillers[0]);  // what was there is intact
  memory.fail = false;
  StackId id = table.Intern(deep.data(), 5);
  ASSERT_NE(id, kInvalidStackId);
  EXPECT_EQ(Read(table, id), deep);
  EXPECT_EQ(table.node_count(), 4097u);
}

TEST(StackTableTest, OutOfMemoryBeforeTheFirstStack) {
  FailingMemoryResource memory;
  StackTable table(memory);
  memory.fail = true;
  auto a = Frames(1, 3);
  EXPECT_EQ(table.Intern(a.data(), 3), kInvalidStackId);
  memory.fail = false;
  StackId id = table.Intern(a.data(), 3);
  ASSERT_NE(id, kInvalidStackId);
  EXPECT_EQ(Read(table, id), a);
}

}  // namespace
}  // namespace heaprec
