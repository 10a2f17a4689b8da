// What `heaprec run` does once the program has ended (and its profiles are symbolized,
// run_symbolizer.h): lists them, points at the peak profile of a process that ended holding
// (almost) nothing, and prints the top sites of the program's own final profile. Everything goes to
// stderr.
#pragma once

#include <sys/types.h>

#include <vector>

#include "cli/run_environment.h"
#include "cli/run_manifest.h"

namespace heaprec::cli {

// `root` is the program's pid; `unprofiled`: heaprec already said why no profile could be written
// (a static executable).
void PrintSummary(const RunOptions& options, pid_t root, const Manifest& manifest, bool unprofiled);

}  // namespace heaprec::cli
