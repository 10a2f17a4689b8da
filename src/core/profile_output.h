// Naming and writing profile files from inside the profiled process.
//
// The output template may contain %p (pid), %t (UTC time, 20261130T093000Z), %e (program name) and
// %%. Dumps other than the one at exit get a sequence number before the .pb.gz extension
// (heap.123.pb.gz becomes heap.123.0001.pb.gz), so a series of dumps never overwrites itself.
//
// Files are written atomically: a temporary file in the same directory (<path>.tmp.<pid>.<n>),
// opened with O_EXCL|O_NOFOLLOW (a symlink planted in a shared /tmp cannot redirect it) and mode
// 0600 (profiles reveal the program's internals), renamed over the final name only once complete.
// On failure the temporary is removed and nothing partial is left behind.
//
// No malloc, no stdio, not async-signal-safe (time formatting).
#pragma once

#include <cstddef>

#include "core/heap_recorder.h"
#include "core/memory_resource.h"
#include "core/pprof_writer.h"

namespace heaprec {

// Expands `pattern` into `out`. sequence 0 means "the final dump" (no sequence number). Returns
// false when the result does not fit.
bool ExpandOutputTemplate(const char* pattern, int pid, const char* program, long long unix_seconds,
                          unsigned sequence, char* out, std::size_t capacity);

// Writes the snapshot to `path` atomically. Returns 0 or an errno value.
int WriteProfileFile(const char* path, const HeapSnapshot& snapshot,
                     const ProfileMetadata& metadata, MemoryResource& memory);

// Appends "pid<TAB>reason<TAB>path\n" to the manifest file through which `heaprec run` learns what
// every process wrote (one write with O_APPEND, so concurrent processes never interleave a line).
void AppendToManifest(const char* manifest, int pid, const char* reason, const char* path);

}  // namespace heaprec
