// The control channel between `heaprec attach` / `heaprec detach` and a dormant process
// (HEAPREC_DORMANT=1, docs/design/dormant.md). The CLI sends the process's own dump signal with
// sigqueue(2) and one of these values; the library tells them from a plain `kill -SIGNAL` (a dump)
// by the si_code SI_QUEUE and the exact value, so nothing else is taken for a command. The
// library names its dump thread after the state, which the CLI reads back from
// /proc/PID/task/TID/comm to confirm that the command was carried out. Header-only and
// allocation-free (the preload library includes it).
#pragma once

namespace heaprec::schema {

inline constexpr char kDormantVariable[] = "HEAPREC_DORMANT";
// Runtime mode for libheaprec.so (preload/runtime/runtime.h): the runtime whose front end attaches.
inline constexpr char kRuntimeVariable[] = "HEAPREC_RUNTIME";
inline constexpr int kAttachSignalValue = 0x68706f6e;  // "hpon"
inline constexpr int kDetachSignalValue = 0x68706f66;  // "hpof"

// The dump thread's name (at most 15 characters, the kernel's limit) in a process started dormant.
inline constexpr char kThreadDormant[] = "heaprec:dormant";  // never attached
inline constexpr char kThreadSampling[] = "heaprec:on";      // attached
inline constexpr char kThreadDetached[] = "heaprec:off";     // attached once, detached since

}  // namespace heaprec::schema
