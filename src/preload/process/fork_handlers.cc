// fork() handling. Before fork every lock of heaprec's is taken, in its one order, by the forking
// thread; after it the parent releases them and the child re-creates them, so a child never finds
// a lock held by a thread that fork did not copy. The child keeps the parent's samples (those
// objects are alive in the child too) and writes its own profiles; its dump thread starts again
// when needed. See docs/design/endings.md, "Fork safety".
#include "preload/process/fork_handlers.h"

#include <pthread.h>
#include <signal.h>

#include "core/arena.h"
#include "preload/alloc/sampling.h"
#include "preload/attach/dormant.h"
#include "preload/attach/got_patch.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/dump/timeline.h"
#include "preload/http/server.h"
#include "preload/objects/unloaded_libraries.h"
#include "preload/process/endings.h"
#include "preload/process/own_process.h"
#include "preload/process/signal_table.h"
#include "preload/record/heap_record.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "preload/unwind/unwinder.h"

namespace heaprec::preload {
namespace {

// fork() from a thread inside heaprec (a signal handler that forks, interrupting a hook) may hold
// any of the locks below: the handlers then take none, and the child does not profile.
bool g_fork_from_inside = false;
sigset_t g_mask_before_fork;

// Lock order: unwind gate, signal table, dump, recorder, unloaded-library list, arena (the arena's
// lock is always innermost). Signals are blocked on the forking thread meanwhile: a handler there
// could want the signal table.
void ForkPrepare() {
  g_fork_from_inside = t_state.in_hook;
  CloseUnwindGateForFork(!g_fork_from_inside);
  if (g_fork_from_inside) return;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &g_mask_before_fork);
  LockSignalTableForFork();
  LockDumps();
  if (HeapRecorder* recorder = g_recorder.load()) recorder->LockForFork();
  LockHeapRecordForFork();
  LockUnloadedForFork();
  g_arena->LockForFork();
}

void ForkParent() {
  OpenUnwindGateInParent();
  if (g_fork_from_inside) return;
  g_arena->UnlockAfterForkInParent();
  UnlockUnloadedAfterForkInParent();
  UnlockHeapRecordAfterForkInParent();
  if (HeapRecorder* recorder = g_recorder.load()) recorder->UnlockAfterForkInParent();
  UnlockDumps();
  UnlockSignalTableAfterFork();
  pthread_sigmask(SIG_SETMASK, &g_mask_before_fork, nullptr);
}

// The child keeps every tracked object (they are alive in the child too), starts an allocation
// history of its own and writes its own profiles. Its dump thread was not copied by fork(): it
// starts again when needed.
void ForkChild() {
  RememberOwnPid();
  OpenUnwindGateInChild();
  ForgetDumpThreadInChild();
  ForgetControlCommandInChild();
  ResetRoutingInChild();
  CloseHttpServerInChild();  // the parent serves; the child must not hold its sockets open
  if (g_fork_from_inside) {
    TurnSamplingOff();
    g_recorder.store(nullptr);  // its tables may be half-updated: never touch them again
    return;
  }
  g_arena->ResetAfterForkInChild();
  ResetUnloadedAfterForkInChild();
  if (HeapRecorder* recorder = g_recorder.load()) {
    recorder->ResetAfterForkInChild();
    // alloc_* count what this process allocated: the history so far is the parent's. (Its live
    // objects are the child's too and stay.) A parent and its workers merged then count each
    // allocation once.
    recorder->ClearAllocationHistory();
  }
  // The parent's record is a shared mapping of the parent's file: the child stops writing it
  // before anything can, and keeps its own.
  DropParentHeapRecordInChild();
  ResetDumpsAfterForkInChild();
  StartTimeline(NowNs(CLOCK_REALTIME));  // the child's own story, from its birth
  UnlockSignalTableAfterFork();
  pthread_sigmask(SIG_SETMASK, &g_mask_before_fork, nullptr);
  // In runtime mode the runtime's front end has the threads (runtime/runtime.h).
  if (!g_settings.runtime) StartDumpThreadIfConfigured();
}

}  // namespace

void InstallForkHandlers() { pthread_atfork(ForkPrepare, ForkParent, ForkChild); }

}  // namespace heaprec::preload
