// The library's start-up (startup.cc): its constructor reads the settings and prepares everything a
// profile needs; the recorder itself comes from StartRecording, which a dormant process defers to
// its first attach (attach/dormant.h).
#pragma once

namespace heaprec::preload {

// Creates the recorder and the unwinder's tables and publishes the recorder, which switches the
// hooks' slow paths on. Called by the constructor of a process that is not dormant, and by the dump
// thread on the first attach. Not async-signal-safe; takes the dump locks.
void StartRecording();

// The start-up of a library injected by `heaprec attach` (attach/injected.h), once its settings
// are in g_settings: what the constructor does for a dormant process, on the calling thread.
void StartInjectedProcess();

}  // namespace heaprec::preload
