// `heaprec run`, after its program: the processes that died without running heaprec's code
// (SIGKILL, the OOM killer) left heap records; each becomes the profiles the process could not
// write (cli/heap_record_reader.h), listed with the rest as if the process had written them.
#pragma once

#include <sys/types.h>

#include "cli/run_manifest.h"

namespace heaprec::cli {

// `root` is the program's pid and `root_signal` the signal that killed it (0 when none).
void RecoverKilledProcesses(Manifest& written, pid_t root, int root_signal);

}  // namespace heaprec::cli
