// The futex mutex under contention: every increment made under it is kept (no two holders at
// once), whether a waiter got the lock while spinning or after sleeping in the kernel.
#include "core/mutex.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace heaprec {
namespace {

TEST(MutexTest, ExcludesUnderContention) {
  Mutex mutex;
  long counter = 0;  // deliberately not atomic: only the mutex protects it
  constexpr int kThreads = 4, kIncrements = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        MutexLock lock(mutex);
        long seen = counter;
        // A critical section long enough that others spin past their budget and sleep.
        if (i % 1000 == 0) std::this_thread::yield();
        counter = seen + 1;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counter, long{kThreads} * kIncrements);
  EXPECT_TRUE(mutex.TryLock());  // left unlocked
  mutex.Unlock();
}

}  // namespace
}  // namespace heaprec
