// The heap recorder as a whole: recording, forgetting, allocation history, and snapshots taken
// while other threads keep recording (the seed's "allocations during a slow serialization" test).
#include "core/heap_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "core/heap_snapshot.h"

namespace heaprec {
namespace {

struct Totals {
  double live_objects = 0, live_bytes = 0;
};

// Live totals per (first frame) from a snapshot, reading every object's frames.
std::map<std::uint64_t, Totals> LiveBySite(const HeapSnapshot& snapshot) {
  std::map<std::uint64_t, Totals> sites;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    std::uint64_t buffer[64];
    StackFrames f = snapshot.Frames(o.stack, buffer, 64);
    std::uint64_t site = f.depth > 0 ? f.frames[0] : 0;
    sites[site].live_objects += o.weight;
    sites[site].live_bytes += o.weight * static_cast<double>(o.size);
  }
  return sites;
}

class HeapRecorderTest : public ::testing::Test {
 protected:
  SystemMemoryResource memory_;
  std::unique_ptr<HeapRecorder> recorder_ =
      std::make_unique<HeapRecorder>(memory_, RecorderOptions{});
};

TEST_F(HeapRecorderTest, RecordsAndForgets) {
  std::uint64_t stack_a[] = {0xa1, 0xa2}, stack_b[] = {0xb1};
  for (std::uint64_t key = 16; key < 16 * 11; key += 16)
    recorder_->Record(key, stack_a, 2, 100, 1.0, 0);
  recorder_->Record(0x9000, stack_b, 1, 5000, 2.5, 0);
  EXPECT_TRUE(recorder_->Forget(16));
  EXPECT_FALSE(recorder_->Forget(16));
  EXPECT_FALSE(recorder_->Forget(0x12345670));
  RecorderStats stats = recorder_->Stats();
  EXPECT_EQ(stats.samples, 11u);
  EXPECT_EQ(stats.forgotten, 1u);
  EXPECT_EQ(stats.live_objects, 10u);
  EXPECT_EQ(stats.stacks, 2u);

  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  auto sites = LiveBySite(snapshot);
  EXPECT_EQ(sites[0xa1].live_objects, 9);
  EXPECT_EQ(sites[0xa1].live_bytes, 900);
  EXPECT_EQ(sites[0xb1].live_objects, 2.5);
  EXPECT_EQ(sites[0xb1].live_bytes, 12500);
  // History keeps the freed allocation too: 10 objects of 100 bytes at site a.
  double history_a = 0;
  for (std::size_t i = 0; i < snapshot.history_count(); ++i) {
    const AllocationTotals& h = snapshot.history()[i];
    std::uint64_t leaf = 0;
    if (snapshot.Frames(h.stack, &leaf, 1).frames[0] == 0xa1) history_a += h.objects;
  }
  EXPECT_EQ(history_a, 10);
}

// The history merges its adds a few dozen at a time (AllocationHistory::AddPending), and a pending
// add holds no reference on its stack: a stack whose only object dies before the merge must not be
// freed (its id would go to the next new stack, which would then be credited with its
// allocations). Each round records and forgets one object on a new stack, tagged and by key, then
// records on further new stacks; the history must count one allocation on each stack, its own.
TEST_F(HeapRecorderTest, TheHistoryKeepsStacksWhoseObjectsDiedBeforeItsAddsWereMerged) {
  constexpr std::uint64_t kRounds = 200;  // several merges' worth (AllocationHistory::kPending)
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    std::uint64_t dying[] = {0x1000 + round}, tagged[] = {0x2000 + round},
                  after[] = {0x3000 + round};
    recorder_->Record(0x10, dying, 1, 8, 1.0, 0);
    ASSERT_TRUE(recorder_->Forget(0x10));
    ObjectTicket ticket = recorder_->RecordWithHandle(0x20, tagged, 1, 16, 1.0, 0, 0);
    ASSERT_TRUE(recorder_->ForgetByTicket(ticket, 0x20));
    recorder_->Record(0x30 + 16 * round, after, 1, 24, 1.0, 0);
  }
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.history_count(), 3 * kRounds);
  std::map<std::uint64_t, std::pair<double, std::uint64_t>> by_leaf;  // objects, size
  for (std::size_t i = 0; i < snapshot.history_count(); ++i) {
    const AllocationTotals& h = snapshot.history()[i];
    std::uint64_t leaf = 0;
    ASSERT_EQ(snapshot.Frames(h.stack, &leaf, 1).depth, 1u);
    by_leaf[leaf].first += h.objects;
    by_leaf[leaf].second = h.size;
  }
  ASSERT_EQ(by_leaf.size(), 3 * kRounds);
  for (const auto& [leaf, totals] : by_leaf) {
    EXPECT_EQ(totals.first, 1) << std::hex << leaf;
    EXPECT_EQ(totals.second, leaf < 0x2000 ? 8u : leaf < 0x3000 ? 16u : 24u) << std::hex << leaf;
  }
  EXPECT_EQ(recorder_->Stats().stacks, 3 * kRounds);  // each kept by its history entry
}

// Temporaries and the bytes allocated: the history counts the temporary samples of each (stack,
// size), through a lane's cache or the locked way alike, and the allocated estimate sums every
// sample's weight x size, freed or not.
TEST_F(HeapRecorderTest, TemporariesAndAllocatedBytesAreCounted) {
  std::uint64_t s1[] = {0x11}, s2[] = {0x22};
  std::int64_t expected_allocated = 0;
  for (std::uint64_t i = 0; i < 100; ++i) {
    ObjectTicket t = recorder_->RecordWithHandle(0x1000 + 16 * i, s1, 1, 40, 2.0, 0, 0);
    expected_allocated += 80;
    if (i % 4 == 0) recorder_->CountTemporary(t.stack, 40, 0);  // lane 0: its cache
    ASSERT_TRUE(recorder_->ForgetByTicket(t, 0x1000 + 16 * i));
  }
  recorder_->Record(0x9000, s2, 1, 1000, 1.0, 0);  // by key: the locked way
  expected_allocated += 1000;
  std::uint32_t s2_stack = 0;
  {
    HeapSnapshot snapshot;
    ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
    s2_stack = snapshot.objects()[0].stack;
  }
  recorder_->CountTemporary(s2_stack, 1000, 7);  // lane 7: a cache nobody used yet
  EXPECT_EQ(recorder_->AllocatedBytesEstimate(), expected_allocated);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  std::map<std::uint64_t, std::pair<std::uint32_t, double>> by_leaf;  // temporary, objects
  for (std::size_t i = 0; i < snapshot.history_count(); ++i) {
    const AllocationTotals& h = snapshot.history()[i];
    std::uint64_t leaf = 0;
    snapshot.Frames(h.stack, &leaf, 1);
    by_leaf[leaf].first += h.temporary;
    by_leaf[leaf].second += h.objects;
  }
  EXPECT_EQ(by_leaf[0x11].first, 25u);
  EXPECT_EQ(by_leaf[0x11].second, 200);
  EXPECT_EQ(by_leaf[0x22].first, 1u);
  EXPECT_EQ(by_leaf[0x22].second, 1);
}

TEST_F(HeapRecorderTest, LiveBytesEstimateFollowsTheLiveSet) {
  std::uint64_t s[] = {1};
  recorder_->Record(0x100, s, 1, 100, 2.5, 0);  // 250
  recorder_->Record(0x200, s, 1, 10, 1.0, 0);   // 10
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 260);
  recorder_->Record(0x200, s, 1, 30, 1.0, 0);  // replaces the 10
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 280);
  LiveObject detached;
  ASSERT_TRUE(recorder_->Detach(0x100, &detached));
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 30);
  recorder_->Reattach(0x100, detached);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 280);
  recorder_->Forget(0x100);
  recorder_->Forget(0x200);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 0);
}

// The history's key includes the front end's tag (Ruby: the class): one (stack, size) allocated
// under two tags is two entries, each with its own count, and tag 0 is the native profiler's.
TEST_F(HeapRecorderTest, HistoryTagsSplitTheEntriesOfOneStackAndSize) {
  std::uint64_t stack[] = {0xa1, 0xa2};
  std::uint64_t key = 16;
  for (int i = 0; i < 3; ++i) recorder_->Record(key += 16, stack, 2, 0, 10.0, 0, 0, 7);
  for (int i = 0; i < 2; ++i) recorder_->Record(key += 16, stack, 2, 0, 10.0, 0, 0, 9);
  recorder_->Record(key += 16, stack, 2, 0, 10.0, 0);
  ASSERT_TRUE(recorder_->Forget(32));  // a dead object still counts in the history
  EXPECT_EQ(recorder_->Stats().history_entries, 3u);
  EXPECT_EQ(recorder_->Stats().stacks, 1u);

  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  snapshot.SortByStackAndSize();
  ASSERT_EQ(snapshot.history_count(), 3u);
  std::map<std::uint32_t, double> by_tag;
  for (std::size_t i = 0; i < snapshot.history_count(); ++i) {
    const AllocationTotals& h = snapshot.history()[i];
    EXPECT_EQ(h.size, 0u);
    EXPECT_EQ(h.bytes, 0);
    by_tag[h.tag] += h.objects;
    if (i > 0) {
      EXPECT_LT(snapshot.history()[i - 1].tag, h.tag) << "sorted by tag within a stack";
    }
  }
  EXPECT_EQ(by_tag, (std::map<std::uint32_t, double>{{0, 10}, {7, 30}, {9, 20}}));
  EXPECT_EQ(snapshot.object_count(), 5u);
}

// A forked child's Ruby profiler starts an allocation history of its own: ClearAllocationHistory
// empties the history (pending adds of the thread caches too) and the allocated-bytes estimate, and
// keeps the live objects and the stacks they use.
TEST_F(HeapRecorderTest, ClearingTheHistoryKeepsTheLiveSet) {
  std::uint64_t parent[] = {0xa1}, child[] = {0xb1};
  recorder_->Record(0x10, parent, 1, 100, 1.0, 0);
  recorder_->Record(0x20, parent, 1, 100, 1.0, 0);
  // Through a thread cache: adds wait there until merged.
  recorder_->RecordWithHandle(0x30, parent, 1, 200, 1.0, 0, 3);
  ASSERT_TRUE(recorder_->Forget(0x20));
  EXPECT_EQ(recorder_->AllocatedBytesEstimate(), 400);

  recorder_->ClearAllocationHistory();
  EXPECT_EQ(recorder_->Stats().history_entries, 0u);
  EXPECT_EQ(recorder_->AllocatedBytesEstimate(), 0);
  EXPECT_EQ(recorder_->Stats().live_objects, 2u);

  recorder_->Record(0x40, child, 1, 50, 2.0, 0);
  recorder_->Record(0x50, parent, 1, 100, 1.0, 0);
  EXPECT_EQ(recorder_->AllocatedBytesEstimate(), 200);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  std::map<std::uint64_t, double> history;
  for (std::size_t i = 0; i < snapshot.history_count(); ++i) {
    const AllocationTotals& h = snapshot.history()[i];
    std::uint64_t leaf;
    history[snapshot.Frames(h.stack, &leaf, 1).frames[0]] += h.objects;
  }
  EXPECT_EQ(history, (std::map<std::uint64_t, double>{{0xa1, 1}, {0xb1, 2}}));
  auto sites = LiveBySite(snapshot);  // the parent's live objects kept their stack
  EXPECT_EQ(sites[0xa1].live_objects, 3);
  EXPECT_EQ(sites[0xa1].live_bytes, 400);
  EXPECT_EQ(sites[0xb1].live_objects, 2);
}

TEST_F(HeapRecorderTest, StacksOfFreedObjectsAreReleasedWithoutHistory) {
  recorder_ =
      std::make_unique<HeapRecorder>(memory_, RecorderOptions{.keep_allocation_history = false});
  std::uint64_t stack[] = {1, 2, 3};
  recorder_->Record(0x100, stack, 3, 10, 1, 0);
  recorder_->Record(0x200, stack, 3, 10, 1, 0);
  EXPECT_EQ(recorder_->Stats().stacks, 1u);
  recorder_->Forget(0x100);
  EXPECT_EQ(recorder_->Stats().stacks, 1u);
  recorder_->Forget(0x200);
  EXPECT_EQ(recorder_->Stats().stacks, 0u);
}

TEST_F(HeapRecorderTest, MissedFreeReplacesTheOldObject) {
  std::uint64_t s1[] = {1}, s2[] = {2};
  recorder_->Record(0x100, s1, 1, 10, 1, 0);
  recorder_->Record(0x100, s2, 1, 20, 1, 0);  // the block was freed behind our back and reused
  RecorderStats stats = recorder_->Stats();
  EXPECT_EQ(stats.replaced, 1u);
  EXPECT_EQ(stats.live_objects, 1u);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.object_count(), 1u);
  EXPECT_EQ(snapshot.objects()[0].size, 20u);
}

TEST_F(HeapRecorderTest, DetachReattachKeepsTheObject) {
  std::uint64_t s[] = {5};
  recorder_->Record(0x100, s, 1, 10, 1, 0);
  LiveObject detached;
  ASSERT_TRUE(recorder_->Detach(0x100, &detached));
  EXPECT_FALSE(recorder_->MaybeTracked(0x100) && recorder_->Forget(0x100));
  recorder_->Reattach(0x100, detached);
  EXPECT_TRUE(recorder_->Forget(0x100));
}

TEST_F(HeapRecorderTest, ObjectsRecordedWithHandlesAreForgottenByTheirTickets) {
  // As the preload library records tagged blocks: the ticket finds the object and holds what its
  // end needs (the estimate and the stats follow), detach and reattach give a new ticket, and a
  // ticket forgotten once finds nothing the second time.
  std::uint64_t s[] = {7, 8};
  ObjectTicket a = recorder_->RecordWithHandle(0x100, s, 2, 100, 2.0, 5, 0);
  ObjectTicket b = recorder_->RecordWithHandle(0x200, s, 2, 10, 1.0, 6, 1);
  ASSERT_NE(a.handle, 0u);
  ASSERT_NE(b.handle, 0u);
  EXPECT_EQ(a.stack, b.stack);
  EXPECT_EQ(a.contribution, 200);
  EXPECT_EQ(b.contribution, 10);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 210);
  EXPECT_EQ(recorder_->Stats().live_objects, 2u);
  EXPECT_EQ(recorder_->Stats().samples, 2u);
  EXPECT_FALSE(recorder_->Forget(0x100));  // not found by key
  LiveObject detached;
  EXPECT_FALSE(recorder_->DetachByHandle(a.handle, 0x200, &detached));  // a's record holds 0x100
  ASSERT_TRUE(recorder_->DetachByHandle(a.handle, 0x100, &detached));
  EXPECT_EQ(detached.size, 100u);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 10);
  ObjectTicket again = recorder_->ReattachWithHandle(0x100, detached, 2);
  ASSERT_NE(again.handle, 0u);
  EXPECT_EQ(again.contribution, 200);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 210);
  EXPECT_TRUE(recorder_->ForgetByTicket(again, 0x100));
  EXPECT_TRUE(recorder_->ForgetByTicket(b, 0x200));
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 0);
  EXPECT_EQ(recorder_->Stats().live_objects, 0u);
  EXPECT_EQ(recorder_->Stats().forgotten, 2u);  // the detach and reattach forget nothing
  EXPECT_EQ(recorder_->Stats().stacks, 1u);     // the history's reference is left
}

TEST_F(HeapRecorderTest, ForgetAllReleasesEveryObjectAndItsStack) {
  recorder_ =
      std::make_unique<HeapRecorder>(memory_, RecorderOptions{.keep_allocation_history = false});
  std::uint64_t s1[] = {1, 2}, s2[] = {3};
  std::vector<ObjectTicket> tickets;
  for (std::uint64_t k = 1; k <= 700; ++k) {
    recorder_->Record(k * 16, s1, 2, 10, 1, 0);
    tickets.push_back(recorder_->RecordWithHandle((k << 32) + 16, s2, 1, 20, 1, 0,
                                                  static_cast<std::uint32_t>(k)));
  }
  EXPECT_EQ(recorder_->Stats().stacks, 2u);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 700 * 30);
  recorder_->ForgetAll();
  RecorderStats stats = recorder_->Stats();
  EXPECT_EQ(stats.live_objects, 0u);
  EXPECT_EQ(stats.stacks, 0u);  // every object's reference was dropped
  EXPECT_EQ(stats.forgotten, 1400u);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 0);
  // A ticket from before ForgetAll (a block freed after a detach) changes nothing.
  EXPECT_FALSE(recorder_->ForgetByTicket(tickets[0], (1ull << 32) + 16));
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 0);
  EXPECT_EQ(recorder_->Stats().forgotten, 1400u);
  EXPECT_FALSE(recorder_->Forget(16));
}

// A snapshot is a stable copy: objects recorded after it are not in it, objects freed after it stay
// in it with readable frames, and the next snapshot sees exactly the new state.
TEST_F(HeapRecorderTest, RecordingDuringSerializationIsNotLostOrCorrupting) {
  std::uint64_t old_stack[] = {0x01, 0x02}, new_stack[] = {0x03, 0x04};
  for (std::uint64_t i = 1; i <= 100; ++i) recorder_->Record(i * 16, old_stack, 2, 8, 1, 0);
  HeapSnapshot during;
  ASSERT_TRUE(during.Take(*recorder_, SnapshotGrouping::kEachObject));
  // While "serializing" `during`: free every old object, record new ones from another thread.
  std::thread other([&] {
    for (std::uint64_t i = 1; i <= 100; ++i) recorder_->Forget(i * 16);
    for (std::uint64_t i = 1; i <= 50; ++i)
      recorder_->Record(0x100000 + i * 16, new_stack, 2, 32, 1, 0);
  });
  other.join();
  auto seen = LiveBySite(during);  // reads frames of stacks whose objects are all gone: pinned
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0x01].live_objects, 100);
  during.Release();
  HeapSnapshot after;
  ASSERT_TRUE(after.Take(*recorder_, SnapshotGrouping::kEachObject));
  auto now = LiveBySite(after);
  EXPECT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0x03].live_objects, 50);
  EXPECT_EQ(now[0x03].live_bytes, 50 * 32);
}

// Many threads record and forget while the main thread keeps taking snapshots and reading every
// object's frames. Each thread's stacks encode its id, so a torn or mixed-up stack is detected.
TEST_F(HeapRecorderTest, ConcurrentRecordingForgettingAndSnapshots) {
  constexpr int kThreads = 6, kRounds = 20000;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::uint64_t> live;
      std::uint64_t next_key = (static_cast<std::uint64_t>(t) + 1) << 40;
      for (int r = 0; r < kRounds; ++r) {
        std::uint64_t depth = 1 + r % 7;
        std::uint64_t frames[8];
        for (std::uint64_t d = 0; d < depth; ++d)
          frames[d] = (static_cast<std::uint64_t>(t) << 32) | (depth << 8) | d;
        std::uint64_t key = next_key += 16;
        recorder_->Record(key, frames, static_cast<std::uint32_t>(depth), depth * 10, 1, 0);
        live.push_back(key);
        if (r % 3 != 0) {
          std::size_t victim = (static_cast<std::size_t>(r) * 7919) % live.size();
          ASSERT_TRUE(recorder_->Forget(live[victim]));
          live[victim] = live.back();
          live.pop_back();
        }
      }
      for (std::uint64_t key : live) ASSERT_TRUE(recorder_->Forget(key));
    });
  }
  int snapshots = 0;
  std::thread serializer([&] {
    while (!stop.load()) {
      HeapSnapshot snapshot;
      ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
      for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
        const HeapSnapshot::Object& o = snapshot.objects()[i];
        std::uint64_t buffer[256];
        StackFrames f = snapshot.Frames(o.stack, buffer, 256);
        ASSERT_GE(f.depth, 1u);
        ASSERT_EQ(o.size, f.depth * 10);
        std::uint64_t thread_bits = f.frames[0] >> 32;
        for (std::uint32_t d = 0; d < f.depth; ++d) {
          ASSERT_EQ(f.frames[d], (thread_bits << 32) | (std::uint64_t{f.depth} << 8) | d);
        }
      }
      snapshot.SortByStackAndSize();
      ++snapshots;
    }
  });
  for (std::thread& t : threads) t.join();
  stop = true;
  serializer.join();
  EXPECT_GT(snapshots, 0);
  RecorderStats stats = recorder_->Stats();
  EXPECT_EQ(stats.live_objects, 0u);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 0);
  EXPECT_EQ(stats.samples, static_cast<std::uint64_t>(kThreads) * kRounds);
  EXPECT_EQ(stats.forgotten, stats.samples);
  EXPECT_EQ(stats.dropped, 0u);
}

// The same by handle, as the preload library records: threads in lanes of their own and threads
// sharing a lane (whose ThreadCache the other holds now and then: those records go the locked
// way), stacks that repeat (the cache's hit) and change, snapshots meanwhile. Every allocation
// reaches the history exactly once, with its own stack: pending adds are neither lost nor counted
// twice, whichever snapshot merges them.
TEST_F(HeapRecorderTest, ThreadCachesCountEveryAllocationOnceWhileSnapshotsRun) {
  constexpr int kThreads = 6, kRounds = 20000;
  constexpr std::uint32_t kLanes[kThreads] = {0, 1, 2, 2, 3, 3};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::pair<std::uint64_t, ObjectTicket>> live;
      std::uint64_t next_key = (static_cast<std::uint64_t>(t) + 1) << 40;
      for (int r = 0; r < kRounds; ++r) {
        std::uint64_t depth = 1 + (r / 5) % 7;  // five records from each stack, then the next
        std::uint64_t frames[8];
        for (std::uint64_t d = 0; d < depth; ++d) {
          frames[d] = (static_cast<std::uint64_t>(t) << 32) | (depth << 8) | d;
        }
        std::uint64_t key = next_key += 16;
        ObjectTicket ticket = recorder_->RecordWithHandle(
            key, frames, static_cast<std::uint32_t>(depth), depth * 10, 1, 0, kLanes[t]);
        ASSERT_NE(ticket.handle, 0u);
        live.emplace_back(key, ticket);
        if (r % 3 != 0) {
          std::size_t victim = (static_cast<std::size_t>(r) * 7919) % live.size();
          ASSERT_TRUE(recorder_->ForgetByTicket(live[victim].second, live[victim].first));
          live[victim] = live.back();
          live.pop_back();
        }
      }
      for (const auto& [key, ticket] : live) ASSERT_TRUE(recorder_->ForgetByTicket(ticket, key));
    });
  }
  int snapshots = 0;
  std::thread serializer([&] {
    while (!stop.load()) {
      HeapSnapshot snapshot;
      ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kBySite));
      ++snapshots;
    }
  });
  for (std::thread& t : threads) t.join();
  stop = true;
  serializer.join();
  EXPECT_GT(snapshots, 0);
  HeapSnapshot last;
  ASSERT_TRUE(last.Take(*recorder_, SnapshotGrouping::kBySite));
  std::map<std::vector<std::uint64_t>, double> allocations;  // stack -> objects
  for (std::size_t i = 0; i < last.history_count(); ++i) {
    const AllocationTotals& h = last.history()[i];
    std::uint64_t buffer[16];
    StackFrames f = last.Frames(h.stack, buffer, 16);
    ASSERT_EQ(h.size, f.depth * 10);
    allocations[std::vector<std::uint64_t>(f.frames, f.frames + f.depth)] += h.objects;
  }
  ASSERT_EQ(allocations.size(), kThreads * 7u);
  double total = 0;
  for (const auto& [frames, objects] : allocations) {
    const std::uint64_t depth = frames.size(), t = frames[0] >> 32;
    for (std::uint64_t d = 0; d < depth; ++d) {
      ASSERT_EQ(frames[d], (t << 32) | (depth << 8) | d);
    }
    // Depth k is recorded in the rounds r with (r / 5) % 7 == k - 1.
    double expected = 0;
    for (int r = 0; r < kRounds; ++r) expected += 1 + (r / 5) % 7 == static_cast<int>(depth);
    EXPECT_EQ(objects, expected) << "thread " << t << " depth " << depth;
    total += objects;
  }
  EXPECT_EQ(total, static_cast<double>(kThreads) * kRounds);
  RecorderStats stats = recorder_->Stats();
  EXPECT_EQ(stats.live_objects, 0u);
  EXPECT_EQ(recorder_->LiveBytesEstimate(), 0);
  EXPECT_EQ(stats.samples, static_cast<std::uint64_t>(kThreads) * kRounds);
  EXPECT_EQ(stats.forgotten, stats.samples);
  EXPECT_EQ(stats.dropped, 0u);
}

// A lane finds the stacks it recorded lately without the stack table's lock (its RecentStacks):
// with more stacks than its entries and more frames than its ring, visited in a scrambled order,
// every record still gets the id of its own stack, and one stack always the same id.
TEST_F(HeapRecorderTest, ALanesRecentStacksNameEachRecordsOwnStack) {
  constexpr std::uint32_t kStacks = 300, kRecords = 6000;
  std::vector<std::vector<std::uint64_t>> stacks(kStacks);
  for (std::uint32_t s = 0; s < kStacks; ++s) {
    // Short stacks of four depths (many share an entry and a depth) and long ones (100 x 120
    // frames: the ring holds 4,096).
    const std::uint32_t depth = s % 3 == 0 ? 120 + s % 7 : 1 + s % 4;
    for (std::uint32_t d = 0; d < depth; ++d) stacks[s].push_back(0x400000 + 0x100 * s + d);
  }
  std::map<std::uint32_t, StackId> id_of;
  std::vector<std::pair<std::uint32_t, ObjectTicket>> records;
  for (std::uint32_t r = 0; r < kRecords; ++r) {
    const std::uint32_t s = (r * 7919 + r / 50) % kStacks;
    const std::vector<std::uint64_t>& frames = stacks[s];
    ObjectTicket ticket = recorder_->RecordWithHandle(
        0x10000 + 16 * r, frames.data(), static_cast<std::uint32_t>(frames.size()), 8, 1, 0, 5);
    ASSERT_NE(ticket.handle, 0u);
    auto [it, first] = id_of.emplace(s, ticket.stack);
    ASSERT_EQ(it->second, ticket.stack) << "stack " << s << ", record " << r;
    records.emplace_back(s, ticket);
  }
  ASSERT_EQ(id_of.size(), kStacks);
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(*recorder_, SnapshotGrouping::kEachObject));
  for (const auto& [s, stack] : id_of) {
    std::uint64_t buffer[160];
    StackFrames f = snapshot.Frames(stack, buffer, 160);
    EXPECT_EQ(std::vector<std::uint64_t>(f.frames, f.frames + f.depth), stacks[s]) << s;
  }
  for (std::uint32_t r = 0; r < kRecords; ++r) {
    ASSERT_TRUE(recorder_->ForgetByTicket(records[r].second, 0x10000 + 16 * r));
  }
}

}  // namespace
}  // namespace heaprec
