// The process-wide state of the preload library that its parts share: settings, the profiler's own
// memory, the sampling interval and the counters every profile reports. Defined in
// profiler_state.cc. Internal to the preload library.
#pragma once

#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/arena.h"
#include "preload/control/settings.h"

namespace heaprec::preload {

extern Settings g_settings;                    // read once at start-up, then constant
extern MmapArena* g_arena;                     // null until start-up succeeded
extern std::atomic<std::uint64_t> g_interval;  // the sampling interval now
extern std::atomic<std::uint64_t> g_unwind_failures;
extern std::atomic<std::uint64_t> g_truncated_stacks;
extern std::uint64_t g_start_time_ns;  // CLOCK_REALTIME at start-up
extern std::uint64_t
    g_process_start_ns;  // CLOCK_REALTIME when the process (not this program) began

std::uint64_t NowNs(clockid_t clock);

// One line on stderr from fixed parts, without stdio (which may allocate or hold locks), and
// without letting a closed pipe on stderr kill the program with SIGPIPE.
void WriteStderr(const char* const* parts, std::size_t count);

// Records which file descriptor 2 is, for ReportMessage. Called first thing at start-up.
void RememberStderr();

// A message from heaprec, after start-up: on stderr while descriptor 2 is still the file it was at
// start-up; once the program has pointed it elsewhere (its own log), in the manifest for
// `heaprec run` to show, or nowhere. Async-signal-safe.
void ReportMessage(const char* const* parts, std::size_t count);

// The dump locks (dumps.cc: the dump's, then the peak copy's), held across exec (exec_hooks.cc) and
// fork (fork_handlers.cc): LockDumps waits for a dump in progress. After exec failed, or in the
// parent after fork, UnlockDumps lets them go; the child of fork re-creates them and starts its own
// dump state and peak instead.
void LockDumps();
void UnlockDumps();
void ResetDumpsAfterForkInChild();

}  // namespace heaprec::preload
