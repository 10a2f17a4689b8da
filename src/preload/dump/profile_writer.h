// Writing one snapshot of the live set as a profile file: its name from the output template, the
// metadata every profile carries (the process's mappings and the comments), and the fallback
// directory after a privilege drop. Shared by the dumps (dump.h) and the peak profile (peak.h).
//
// Async-signal-safe: no malloc (memory from the profiler's arena), no stdio, no loader locks. The
// callers hold the lock that keeps the file theirs (the dump's or the peak's).
#pragma once

#include <errno.h>

#include <cstddef>
#include <cstdint>

#include "core/heap_profile_encoder.h"
#include "core/heap_snapshot.h"
#include "core/profile_file.h"
#include "preload/dump/dump_reason.h"
#include "preload/dump/profile_comments.h"
#include "preload/dump/timeline.h"
#include "preload/objects/process_mappings.h"
#include "preload/state.h"

namespace heaprec::preload {

// The output template's name for a profile with `sequence` (0: the final profile's name).
bool ExpandProfileName(unsigned sequence, char* target, std::size_t capacity);

// At start-up (and so again after exec), before the program can rewrite its argv: the name %e
// expands to from then on.
void RememberProgramName();
const char* ProgramName();  // "" before RememberProgramName

// Existing files at a profile's name written since this process started are another program's of
// this process (before an exec) or another process's: never overwritten. See WriteOptions.
WriteOptions KeepingNewerFiles();

// What a profile of `snapshot`, written for `reason`, says about the process (profile_comments.h).
ProfileFacts GatherFacts(const HeapSnapshot& snapshot, DumpReason reason, int signal_number);

// Calls write(metadata) with the metadata of `snapshot`, taken at `taken_ns`: the process's
// mappings and the comments every profile carries. Returns write's result, or ENOMEM.
template <typename Write>
int WithMetadata(HeapSnapshot& snapshot, DumpReason reason, int signal_number,
                 std::uint64_t taken_ns, Write&& write) {
  snapshot.SortByStackAndSize();
  ProcessMappings mappings(*g_arena);
  if (!mappings.Read(snapshot)) return ENOMEM;
  const ProfileFacts facts = GatherFacts(snapshot, reason, signal_number);
  ProfileComments comments(facts);
  // The comments every profile carries, then the timeline's.
  const char* all_comments[ProfileComments::kCapacity + 1];
  std::size_t comment_count = 0;
  for (std::size_t i = 0; i < comments.count(); ++i)
    all_comments[comment_count++] = comments.list()[i];
  // The timeline runs to now, not to when the snapshot was taken: a peak profile written a while
  // after its capture tells what came after too (peak_ms marks the capture).
  TimelineComment timeline(g_recorder.load(std::memory_order_acquire), NowNs(CLOCK_REALTIME),
                           facts.rss, *g_arena);
  if (timeline.text() != nullptr) all_comments[comment_count++] = timeline.text();
  ProfileMetadata metadata = {g_interval.load(),
                              static_cast<std::int64_t>(taken_ns),
                              static_cast<std::int64_t>(taken_ns - g_start_time_ns),
                              mappings.mappings(),
                              mappings.count(),
                              all_comments,
                              comment_count};
  return write(metadata);
}

// Writes `snapshot`, taken at `taken_ns`, to `target` with the metadata every profile carries; on a
// permission error, to the same name in the fallback directory, if there is one. Returns 0 or an
// errno value.
int WriteProfile(HeapSnapshot& snapshot, DumpReason reason, int signal_number, const char* target,
                 std::uint64_t taken_ns, const WriteOptions& options);

// Where profiles go that cannot be written at their usual place after the process dropped its
// privileges (process/identity_hooks.cc): same file name, in this directory. Set before the drop.
void SetFallbackDirectory(const char* directory);

}  // namespace heaprec::preload
