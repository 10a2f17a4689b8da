#include "preload/dump/dump_thread.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "preload/attach/dormant.h"
#include "preload/attach/injected.h"
#include "preload/dump/dump.h"
#include "preload/dump/peak.h"
#include "preload/messages.h"
#include "preload/record/heap_record.h"
#include "preload/state.h"
#include "preload/thread_state.h"

namespace heaprec::preload {
namespace {

// At most one peak profile per this many nanoseconds: a fast-growing heap would otherwise rewrite
// it at every 10% of growth.
constexpr std::uint64_t kPeakWriteSpacingNs = 1000000000ull;

std::atomic<std::uint32_t> g_wake{0};  // futex word: bumped by every request
std::atomic<std::uint32_t> g_signal_requests{0};
std::atomic<bool> g_above_requested{false};
std::atomic<bool> g_peak_requested{false};
std::atomic<bool> g_running{false};  // a thread exists in this process (or is being created)

void Wake() {
  g_wake.fetch_add(1, std::memory_order_release);
  int saved_errno = errno;
  syscall(SYS_futex, &g_wake, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  errno = saved_errno;
}

void Sleep(std::uint32_t seen, std::uint64_t timeout_ns) {
  timespec timeout = {static_cast<time_t>(timeout_ns / 1000000000ull),
                      static_cast<long>(timeout_ns % 1000000000ull)};
  syscall(SYS_futex, &g_wake, FUTEX_WAIT_PRIVATE, seen,
          timeout_ns == UINT64_MAX ? nullptr : &timeout, nullptr, 0);
}

// A dump on the dump signal. A process started dormant and never attached has no recorder and
// writes nothing: one line says why, rather than silence.
void SignalDump() {
  if (Dump(DumpReason::kSignal, nullptr) != ENOSYS || !g_settings.dormant || g_settings.quiet)
    return;
  const char* parts[] = {
      "heaprec: sampling is off (dormant, never attached): no profile written\n"};
  ReportMessage(parts, 1);
}

// The heap record is made here rather than at start-up: see heap_record.h. Under the dump's lock,
// which fork() and exec take first, and which the final dump holds when it ends the record; not
// under the peak copy's, which would make the captures of the millisecond this takes skip.
// False while there is no recorder yet (a dormant process before its attach): try again later.
bool StartHeapRecordOnce() {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return false;
  LockDumpOnly();
  if (!FinalDumpDone()) {
    StartHeapRecord(*recorder);
    if (HeapRecordKeepsPeaks()) KeepPeakInHeapRecord();
  }
  UnlockDumpOnly();
  return true;
}

// When the peak profile may next be written. At most once a second, and the first write too waits
// a second after the first capture while the heap record keeps the peak copies: a process killed
// meanwhile leaves its peak in the record (heaprec run and heaprec recover write it), and one that
// ends meanwhile writes its peak with its final profile (and one that execs, before the exec). So
// a short process, a compiler or a shell's child, writes its peak profile once rather than twice
// (each a new file: encoding, compressing, creating, renaming over the first); without a record
// the first capture is written at once, as before records, and under `heaprec run --push`, which
// pushes the peak of a process killed without a final profile as soon as it is on disk.
std::uint64_t PeakWriteAllowedAt(std::uint64_t first_request_ns, std::uint64_t next_allowed_ns) {
  if (first_request_ns == 0 || g_settings.peak_at_once || !HeapRecordKeepsPeaks()) {
    return next_allowed_ns;
  }
  std::uint64_t deferred = first_request_ns + kPeakWriteSpacingNs;
  return deferred > next_allowed_ns ? deferred : next_allowed_ns;
}

void* DumpLoop(void*) {
  t_state.in_hook = true;  // everything this thread allocates is heaprec's own
  const std::uint64_t interval_ns = g_settings.dump_interval_ms * 1000000ull;
  std::uint64_t next_interval = interval_ns != 0 ? NowNs(CLOCK_MONOTONIC) + interval_ns : 0;
  std::uint64_t next_peak_allowed = 0;
  std::uint64_t first_peak_request = 0;  // when a peak profile was first asked for
  bool record_started = false;  // this thread is the process's only dump thread: once per process
  for (;;) {
    std::uint32_t seen = g_wake.load(std::memory_order_acquire);
    if (!record_started) record_started = StartHeapRecordOnce();
    RunControlCommand();
    std::uint64_t injected_timeout = RunInjectedWork();
    if (g_signal_requests.exchange(0) != 0) SignalDump();
    if (g_above_requested.exchange(false)) Dump(DumpReason::kAbove, nullptr);
    std::uint64_t now = NowNs(CLOCK_MONOTONIC);
    if (interval_ns != 0 && now >= next_interval) {
      Dump(DumpReason::kInterval, nullptr);
      now = NowNs(CLOCK_MONOTONIC);
      while (next_interval <= now) next_interval += interval_ns;
    }
    if (g_peak_requested.load() && first_peak_request == 0) first_peak_request = now;
    if (g_peak_requested.load() &&
        now >= PeakWriteAllowedAt(first_peak_request, next_peak_allowed)) {
      g_peak_requested.store(false);
      WritePeakProfile();
      next_peak_allowed = NowNs(CLOCK_MONOTONIC) + kPeakWriteSpacingNs;
    }
    now = NowNs(CLOCK_MONOTONIC);
    std::uint64_t timeout = UINT64_MAX;
    if (interval_ns != 0) timeout = next_interval > now ? next_interval - now : 0;
    if (g_peak_requested.load()) {
      std::uint64_t allowed = PeakWriteAllowedAt(first_peak_request, next_peak_allowed);
      std::uint64_t until_peak = allowed > now ? allowed - now : 0;
      if (until_peak < timeout) timeout = until_peak;
    }
    if (injected_timeout < timeout) timeout = injected_timeout;
    bool more = g_signal_requests.load() != 0 || g_above_requested.load();
    if (!more && timeout != 0) Sleep(seen, timeout);
  }
  return nullptr;
}

void StartThread() {
  bool expected = false;
  if (!g_running.compare_exchange_strong(expected, true)) return;
  if (!StartHeaprecThread(DumpLoop)) g_running.store(false);
}

}  // namespace

bool StartHeaprecThread(void* (*body)(void*), void* argument) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);  // the new thread inherits "everything blocked"
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  bool started = pthread_create(&thread, &attr, body, argument) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return started;
}

void StartDumpThread() { StartThread(); }

void StartDumpThreadIfConfigured() {
  if (g_settings.dump_interval_ms != 0 || g_settings.dump_signal != 0) StartThread();
}

void WakeDumpThread() { Wake(); }

void RequestSignalDump() {
  g_signal_requests.fetch_add(1);
  Wake();
}

// Only the first capture of a pending write wakes the thread: the write waits for a time set by
// that first request (PeakWriteAllowedAt), and then takes whatever was captured last. Waking it for
// every capture (a compiler makes twenty in 0.1 s) cost a system call on the program's thread and a
// context switch each, for nothing. Without a thread (pthread_create failed) every capture tries
// again to start one, as before.
void RequestPeakWrite() {
  if (g_peak_requested.exchange(true) && g_running.load()) return;
  StartThread();
  Wake();
}

void RequestAboveDump() {
  g_above_requested.store(true);
  StartThread();
  Wake();
}

void ForgetDumpThreadInChild() {
  g_running.store(false);
  g_signal_requests.store(0);
  g_above_requested.store(false);
  g_peak_requested.store(false);
}

}  // namespace heaprec::preload
