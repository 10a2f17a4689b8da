// Dormant mode: the deferred start-up, the control commands and the dump thread's name
// (dormant.h, docs/design/dormant.md).
#include "preload/attach/dormant.h"

#include <sys/prctl.h>
#include <time.h>

#include <atomic>
#include <new>

#include "core/heap_recorder.h"
#include "preload/alloc/sampling.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/messages.h"
#include "preload/startup.h"
#include "preload/state.h"
#include "preload/unwind/unwinder.h"
#include "schema/control.h"

namespace heaprec::preload {
namespace {

// The latest command not carried out yet, and whether it came from `heaprec attach`/`detach`
// (which get a line on the process's stderr) rather than the program's own heaprec_start/stop.
enum Command : int { kNone = 0, kAttach = 1, kDetach = 2, kFromSignal = 4 };
std::atomic<int> g_command{kNone};
std::atomic<std::uint64_t> g_attaches{0};
std::atomic<std::uint64_t> g_last_attach_ns{0};

void Say(bool from_signal, const char* text) {
  if (!from_signal || g_settings.quiet) return;
  const char* parts[] = {"heaprec: ", text, "\n"};
  ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
}

void Attach(bool from_signal) {
  bool was_active = IsActive();
  StartRecording();
  SetSampling(true);
  if (!was_active) {
    g_attaches.fetch_add(1);
    g_last_attach_ns.store(NowNs(CLOCK_REALTIME));
  }
  Say(from_signal, IsActive() ? "sampling on (attach)" : "sampling could not be switched on");
}

void Detach(bool from_signal) {
  SetSampling(false);
  Say(from_signal, "sampling off (detach)");
}

}  // namespace

bool TakeControlCommand(const siginfo_t* info) {
  if (!g_settings.dormant || info == nullptr || info->si_code != SI_QUEUE) return false;
  int value = info->si_value.sival_int;
  if (value != schema::kAttachSignalValue && value != schema::kDetachSignalValue) return false;
  g_command.store((value == schema::kAttachSignalValue ? kAttach : kDetach) | kFromSignal);
  WakeDumpThread();
  return true;
}

void RequestAttach() {
  g_command.store(kAttach);
  WakeDumpThread();
}

void RequestDetach() {
  g_command.store(kDetach);
  WakeDumpThread();
}

void RunControlCommand() {
  if (!g_settings.dormant) return;
  int command = g_command.exchange(kNone);
  bool from_signal = (command & kFromSignal) != 0;
  if ((command & kAttach) != 0) Attach(from_signal);
  if ((command & kDetach) != 0) Detach(from_signal);
  const char* name = g_recorder.load() == nullptr ? schema::kThreadDormant
                     : IsActive()                 ? schema::kThreadSampling
                                                  : schema::kThreadDetached;
  prctl(PR_SET_NAME, name, 0, 0, 0);
}

void AttachOnCaller() { Attach(false); }

void ForgetControlCommandInChild() { g_command.store(kNone); }

std::uint64_t AttachCount() { return g_attaches.load(); }
std::uint64_t LastAttachNs() { return g_last_attach_ns.load(); }

}  // namespace heaprec::preload
