// A non-recursive mutex for code that runs inside the profiled process.
//
// Built on a futex word rather than pthread_mutex_t for two reasons. A thread that ends the process
// from a signal handler (a crash or a termination signal, see src/preload/endings.cc) takes these
// locks: atomics and the futex system call are async-signal-safe, pthread_mutex_lock is not
// promised to be. And a child of fork() re-creates the lock by storing 0, which no pthread call
// can do safely there. Never allocates, never throws. Waiting for a lock the calling thread
// already holds deadlocks, as with any non-recursive mutex: heaprec's callers prevent that with
// HookGuard (a signal arriving inside heaprec is deferred).
#pragma once

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace heaprec {

class Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() {
    int expected = kUnlocked;
    if (!state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire)) {
      LockContended(expected);
    }
  }
  void Unlock() {
    if (state_.exchange(kUnlocked, std::memory_order_release) == kContended)
      Futex(FUTEX_WAKE_PRIVATE, 1);
  }
  bool TryLock() {
    int expected = kUnlocked;
    return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire);
  }

  // In a child after fork() the lock may have been taken by a thread that no longer exists; the
  // fork handlers hold every lock across fork() and the child re-creates it unlocked.
  void ResetAfterFork() { state_.store(kUnlocked, std::memory_order_relaxed); }

 private:
  // The classic three-state futex lock: unlocked, locked, locked with (possible) waiters. Unlock
  // makes a system call only when someone may be waiting.
  static constexpr int kUnlocked = 0, kLocked = 1, kContended = 2;

  // heaprec's critical sections are short (a stack lookup, a table insert: well under a
  // microsecond), so a waiter first spins for about as long as one takes, which costs far less than
  // sleeping in the kernel and being woken. Taking the lock with a plain kLocked while others sleep
  // is safe: a woken waiter marks it kContended again before it waits.
  static constexpr int kSpins = 128;

  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  void LockContended(int seen) {
    for (int spin = 0; spin < kSpins; ++spin) {
      CpuRelax();
      if (state_.load(std::memory_order_relaxed) != kUnlocked) continue;
      int expected = kUnlocked;
      if (state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire)) return;
      seen = expected;
    }
    if (seen != kContended) seen = state_.exchange(kContended, std::memory_order_acquire);
    while (seen != kUnlocked) {
      Futex(FUTEX_WAIT_PRIVATE, kContended);
      seen = state_.exchange(kContended, std::memory_order_acquire);
    }
  }

  // The program's errno must survive a contended lock taken inside free() or malloc().
  void Futex(int op, int value) {
    int saved_errno = errno;
    syscall(SYS_futex, &state_, op, value, nullptr, nullptr, 0);
    errno = saved_errno;
  }

  std::atomic<int> state_{kUnlocked};
  static_assert(sizeof(std::atomic<int>) == sizeof(int), "the futex word is the atomic itself");
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
