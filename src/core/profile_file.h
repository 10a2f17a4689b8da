// Naming and writing profile files from inside the profiled process (the preload library and the
// Ruby extension); the manifest that lists them is manifest_writer.h.
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
// A profile never overwrites one that another program of the same process (before an exec) or
// another process wrote meanwhile: see WriteOptions. Descriptors are heaprec's own
// (own_descriptors.h): high, close-on-exec, checked against the file created before every write
// and before the close. A program that closes the descriptor and reuses its number under the writer
// gets its own file back untouched; the profile is written again from the start, once, and never
// published incomplete.
//
// No malloc, no stdio, no locks: async-signal-safe, so a crash handler can write a profile.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "core/gzip_file_sink.h"
#include "core/heap_profile_encoder.h"
#include "core/heap_snapshot.h"
#include "core/memory_resource.h"

namespace heaprec {

// Expands `pattern` into `out`. sequence 0 means "the final dump" (no sequence number). Returns
// false when the result does not fit.
bool ExpandOutputTemplate(const char* pattern, int pid, const char* program, long long unix_seconds,
                          unsigned sequence, char* out, std::size_t capacity);

// `path` with `insert` before its ".pb.gz" extension (or at its end): heap.1.pb.gz with ".0001" is
// heap.1.0001.pb.gz. False when the result does not fit in `capacity`; `path` and `out` must not
// overlap.
bool InsertBeforeExtension(const char* path, const char* insert, char* out, std::size_t capacity);

struct WriteOptions {
  // Rename over whatever is at `path` (a profile rewriting its own earlier version).
  bool replace = true;
  // Without `replace`: a file already at `path` modified at or after this time (Unix nanoseconds)
  // is kept, and the profile goes to "name-2.pb.gz" ("-3", ...) instead; an older one is replaced.
  long long keep_since_ns = 0;
  // Where the name actually used is copied, when not null.
  char* written_path = nullptr;
  std::size_t written_capacity = 0;
  // kStore: gzip without compression, for a file that is rewritten compressed (heaprec run).
  GzipMode gzip = GzipMode::kDeflate;
};

// Encodes the snapshot (heap_profile_encoder.h), gzipped, into `path` atomically. Returns 0 or an
// errno value.
int WriteHeapProfileFile(const char* path, const HeapSnapshot& snapshot,
                         const ProfileMetadata& metadata, MemoryResource& memory,
                         const WriteOptions& options = WriteOptions());

}  // namespace heaprec
