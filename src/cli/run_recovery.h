// `heaprec run`, after its program: the processes that died without running heaprec's code
// (SIGKILL, the OOM killer) left heap records; each becomes the profiles the process could not
// write (cli/heap_record_reader.h), listed with the rest as if the process had written them.
#pragma once

#include <sys/types.h>

#include "cli/run_manifest.h"

namespace heaprec::cli {

// `root` is the program's pid and `root_signal` the signal that killed it (0 when none). A process
// whose record's owner still runs is listed in `written.running` instead.
void RecoverKilledProcesses(Manifest& written, pid_t root, int root_signal);

// Removes the spare record files (schema/heap_record_format.h, kSparePrefix) that ended processes
// left for the next one, in every directory a record of the run was kept in. After the manifest is
// gone: a process still running then no longer parks its record.
void RemoveRecordSpares(const Manifest& written);

}  // namespace heaprec::cli
