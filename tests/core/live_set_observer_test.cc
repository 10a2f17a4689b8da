// The recorder's LiveSetObserver: told of what is live when it attaches, then of every change, so
// that a copy kept from the calls alone (as the heap record keeps one) equals the live set, frames
// included, while several threads record and forget.
#include "core/live_set_observer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/heap_snapshot.h"

namespace heaprec {
namespace {

// A copy of the live set made from the observer's calls only.
class CopyingObserver final : public LiveSetObserver {
 public:
  void ObjectAdded(std::size_t, std::uint64_t key, const LiveObject& object) override {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_[key] = object;
  }
  void ObjectRemoved(std::size_t, std::uint64_t key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_.erase(key);
  }
  void NodeCreated(StackId id, StackId parent, std::uint64_t frame) override {
    std::lock_guard<std::mutex> lock(mutex_);
    nodes_[id] = {parent, frame};
  }

  // key -> (size, frames leaf first), the stacks walked through the nodes told of.
  std::map<std::uint64_t, std::pair<std::uint64_t, std::vector<std::uint64_t>>> Live() const {
    std::map<std::uint64_t, std::pair<std::uint64_t, std::vector<std::uint64_t>>> live;
    for (const auto& [key, object] : objects_) {
      std::vector<std::uint64_t> frames;
      for (StackId id = object.stack; id > 1 && frames.size() < 1000;) {
        auto it = nodes_.find(id);
        if (it == nodes_.end()) break;
        frames.push_back(it->second.second);
        id = it->second.first;
      }
      live[key] = {object.size, frames};
    }
    return live;
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, LiveObject> objects_;
  std::map<StackId, std::pair<StackId, std::uint64_t>> nodes_;
};

std::map<std::uint64_t, std::pair<std::uint64_t, std::vector<std::uint64_t>>> LiveOf(
    HeapRecorder& recorder) {
  HeapSnapshot snapshot;
  EXPECT_TRUE(snapshot.Take(recorder, SnapshotGrouping::kEachObject));
  std::map<std::uint64_t, std::pair<std::uint64_t, std::vector<std::uint64_t>>> live;
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const HeapSnapshot::Object& o = snapshot.objects()[i];
    std::uint64_t buffer[64];
    StackFrames f = snapshot.Frames(o.stack, buffer, 64);
    live[o.key] = {o.size, std::vector<std::uint64_t>(f.frames, f.frames + f.depth)};
  }
  return live;
}

TEST(LiveSetObserverTest, AnObserverAttachedLateIsToldOfWhatIsLiveThenOfEveryChange) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  for (std::uint64_t key = 1; key <= 100; ++key) {
    std::uint64_t frames[] = {key % 7 + 100, key % 3 + 200, 300};
    recorder.Record(key * 16, frames, 3, key, 1.0, 0);
  }
  for (std::uint64_t key = 1; key <= 100; key += 3) recorder.Forget(key * 16);
  CopyingObserver observer;
  recorder.Observe(&observer);
  EXPECT_EQ(observer.Live(), LiveOf(recorder)) << "the replay";

  // Four threads record and forget keys of their own, replacing some (a missed free), with
  // stacks that come and go.
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&recorder, t] {
      for (std::uint64_t i = 0; i < 20000; ++i) {
        std::uint64_t key = (1000000 * (t + 1) + i % 500) * 16;
        std::uint64_t frames[] = {i % 97 + 1000 * t, i % 13 + 5, 7};
        if (i % 5 == 4) {
          recorder.Forget(key);
        } else {
          recorder.Record(key, frames, 3, i + 1, 1.0, 0);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(observer.Live(), LiveOf(recorder)) << "after the changes";

  recorder.Observe(nullptr);
  std::uint64_t frames[] = {1, 2};
  recorder.Record(16 * 99999999, frames, 2, 1, 1.0, 0);
  EXPECT_NE(observer.Live(), LiveOf(recorder)) << "a detached observer is told nothing";
}

// An observer that holds the first change it is told of until released, so that the change is
// in flight, deterministically, while another thread detaches it.
class HoldingObserver final : public LiveSetObserver {
 public:
  void ObjectAdded(std::size_t, std::uint64_t, const LiveObject&) override { Hold(); }
  void ObjectRemoved(std::size_t, std::uint64_t) override { Hold(); }
  void NodeCreated(StackId, StackId, std::uint64_t) override {}

  void WaitUntilHeld() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return held_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  // The order of events, as this test's threads append to it.
  void Note(const char* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(event);
  }
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

 private:
  void Hold() {
    std::unique_lock<std::mutex> lock(mutex_);
    held_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return released_; });
    events_.push_back("change told");
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  bool held_ = false, released_ = false;
  std::vector<std::string> events_;
};

// The heap record unmaps its file once detached (preload/record/heap_record.h): detaching must not
// return while a change is still being told to the observer.
TEST(LiveSetObserverTest, DetachingWaitsForAChangeBeingTold) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  HoldingObserver observer;
  recorder.Observe(&observer);
  std::thread recording([&] {
    std::uint64_t frames[] = {1, 2, 3};
    recorder.Record(4096, frames, 3, 64, 1.0, 0);
  });
  observer.WaitUntilHeld();
  std::thread detaching([&] {
    recorder.Observe(nullptr);
    observer.Note("detached");
  });
  // Long enough for a detach that does not wait to have returned; a correct one returns only
  // after the release, however long this takes.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  observer.Note("released");
  observer.Release();
  recording.join();
  detaching.join();
  EXPECT_EQ(observer.events(), (std::vector<std::string>{"released", "change told", "detached"}));
}

}  // namespace
}  // namespace heaprec
