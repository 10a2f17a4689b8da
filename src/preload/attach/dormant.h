// Dormant mode (HEAPREC_DORMANT=1, docs/design/dormant.md): the library loads with sampling off and
// without its recorder, and `heaprec attach PID` switches sampling on later; `heaprec detach PID`
// off again. Commands arrive as the dump signal sent with sigqueue(2) and a value from
// schema/control.h: the signal handler only records the command and wakes the dump thread, which
// carries it out, including the start-up work deferred to the first attach (StartRecording).
#pragma once

#include <signal.h>

#include <cstdint>

namespace heaprec::preload {

// From the dump signal's handler: true when `info` carries an attach or detach command in a process
// started dormant; the command is then queued for the dump thread. Async-signal-safe.
bool TakeControlCommand(const siginfo_t* info);

// heaprec_start() and heaprec_stop() in a process started dormant: queue an attach or a detach, as
// `heaprec attach` and `detach` do.
void RequestAttach();
void RequestDetach();

// `heaprec attach` of an injected library (injected.h): the attach, on the calling thread, at
// once, without the thread's renaming.
void AttachOnCaller();

// The dump thread: carries out the command queued last, if any, and names the thread after the
// state (schema/control.h) for `heaprec attach` to read back. Also called when the thread starts.
void RunControlCommand();

// The child after fork(): a command sent to the parent is not the child's.
void ForgetControlCommandInChild();

// For the profile's comments: how many times the process was attached (0: it was not started
// dormant), and when the latest attach was (CLOCK_REALTIME ns).
std::uint64_t AttachCount();
std::uint64_t LastAttachNs();

}  // namespace heaprec::preload
