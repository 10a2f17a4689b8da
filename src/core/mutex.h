// A non-recursive mutex for code that runs inside the profiled process.
//
// std::mutex would do, but its error path throws std::system_error, which pulls libstdc++'s runtime
// into the preload library. This wrapper calls pthreads directly and never throws. Locking may
// block; it never allocates. Not async-signal-safe.
#pragma once

#include <pthread.h>

namespace heaprec {

class Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() { pthread_mutex_lock(&mutex_); }
  void Unlock() { pthread_mutex_unlock(&mutex_); }
  bool TryLock() { return pthread_mutex_trylock(&mutex_) == 0; }

  // In a child after fork() the lock may have been taken by a thread that no longer exists; the
  // fork handlers hold every lock across fork() and the child re-creates it unlocked.
  void ResetAfterFork() { pthread_mutex_init(&mutex_, nullptr); }

 private:
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

class MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) : mutex_(mutex) { mutex_.Lock(); }
  ~MutexLock() { mutex_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mutex_;
};

}  // namespace heaprec
