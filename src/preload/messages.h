// heaprec's messages from inside the profiled process: one line each, without stdio (which may
// allocate or hold locks), never where the program pointed its stderr after start-up, and never a
// SIGPIPE that would kill the program for heaprec's sake.
#pragma once

#include <cstddef>

namespace heaprec::preload {

// One line on stderr from fixed parts. Async-signal-safe.
void WriteStderr(const char* const* parts, std::size_t count);

// Records which file descriptor 2 is, for ReportMessage. Called first thing at start-up.
void RememberStderr();

// A message from heaprec, after start-up: on stderr while descriptor 2 is still the file it was at
// start-up; once the program has pointed it elsewhere (its own log), in the manifest for
// `heaprec run` to show, or nowhere. Async-signal-safe.
void ReportMessage(const char* const* parts, std::size_t count);

}  // namespace heaprec::preload
