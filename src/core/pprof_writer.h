// Writes a HeapSnapshot as a pprof profile (profile.proto) following Go's heap profile conventions:
//
//   sample_type  alloc_objects/count  alloc_space/bytes  inuse_objects/count  inuse_space/bytes
//   period_type  space/bytes, period = sampling interval, default_sample_type = inuse_space
//   one sample per (stack, requested size), with a numeric label bytes = that size and, when some
//   of its objects are live, a numeric label oldest_alloc_ns = when the oldest of them was
//   allocated (CLOCK_REALTIME nanoseconds), so reports can show how long a site has been holding
//   memory
//
// Values are sums of per-object weights (each object unbiased at sample time), rounded once per
// sample. Frames are written as locations with an address and the mapping that contains it;
// symbolization happens later, outside the profiled process. The stream is written top-level field
// by top-level field, so memory stays bounded by the location index and the largest single message.
//
// Runs in the profiled process: no malloc (memory from the MemoryResource), no locks of its own, no
// exceptions. Not signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_sink.h"
#include "core/heap_recorder.h"
#include "core/memory_resource.h"

namespace heaprec {

struct ProfileMapping {
  std::uint64_t start;
  std::uint64_t limit;
  std::uint64_t file_offset;
  const char* path;
  const char* build_id;  // lowercase hex, "" when unknown
};

struct ProfileMetadata {
  std::uint64_t sample_interval;
  std::int64_t time_nanos;
  std::int64_t duration_nanos;
  const ProfileMapping* mappings;  // sorted by start, not overlapping
  std::size_t mapping_count;
  const char* const* comments;
  std::size_t comment_count;
};

// Writes `snapshot` (sorted with SortByStackAndSize) to `sink`. Returns false if the sink failed or
// the profiler's memory ran out.
bool WriteHeapProfile(const HeapSnapshot& snapshot, const ProfileMetadata& metadata,
                      MemoryResource& memory, ByteSink& sink);

}  // namespace heaprec
