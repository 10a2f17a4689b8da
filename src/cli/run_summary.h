// What `heaprec run` does once the program has ended: symbolizes the profiles its processes wrote,
// lists them, points at the peak profile of a process that ended holding (almost) nothing, and
// prints the top sites of the program's own final profile. Everything goes to stderr.
#pragma once

#include <sys/types.h>

#include <vector>

#include "cli/run_environment.h"
#include "cli/run_manifest.h"

namespace heaprec::cli {

// Symbolizes every profile that needs it, in place, with one Symbolizer: the processes of a run
// share most of their binaries. Returns false if any could not be processed.
bool SymbolizeProfiles(const std::vector<ManifestEntry>& entries, bool symbol_cache);

// `root` is the program's pid; `unprofiled`: heaprec already said why no profile could be written
// (a static executable).
void PrintSummary(const RunOptions& options, pid_t root, const Manifest& manifest, bool unprofiled);

}  // namespace heaprec::cli
