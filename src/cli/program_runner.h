// Starting the program `heaprec run` profiles, and waiting for it, so that the program cannot
// tell heaprec from the shell that would otherwise have started it: it gets heaprec's own signal
// dispositions and mask as heaprec found them, and exactly the descriptors heaprec inherited
// (everything heaprec opens itself is close-on-exec). Signals sent to heaprec are passed on.
#pragma once

#include <sys/types.h>

#include <functional>

#include "cli/run_environment.h"

namespace heaprec::cli {

// Occupies each of descriptors 0, 1 and 2 that heaprec was started without with /dev/null,
// close-on-exec. Otherwise the next file heaprec opens (the status pipe, a profile) would take that
// number, and heaprec's messages to stderr would land in it; exec closes the placeholders, so the
// program still starts with them closed, as it would without heaprec.
void ReserveStandardDescriptors();

// Runs options.command with the signals forwarded and says how it ended; returns heaprec's exit
// status: the program's, 128+N when signal N killed it, 126/127 when it could not be executed.
// `pid` is the program's, or -1 if it could not be started. `started`, when set, is called once the
// program has been executed, before heaprec waits for it: where heaprec may start threads of its
// own (none may run across the fork, which would leave the child's copies of their locks held).
int RunProgram(const RunOptions& options, pid_t* pid, const std::function<void()>& started = {});

}  // namespace heaprec::cli
