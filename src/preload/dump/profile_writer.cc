#include "preload/dump/profile_writer.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "core/appender.h"
#include "core/arena.h"
#include "preload/attach/dormant.h"
#include "preload/attach/injected.h"
#include "preload/dump/peak.h"
#include "preload/process/process_memory.h"
#include "preload/record/heap_record.h"
#include "preload/unwind/unwinder.h"

extern "C" char* program_invocation_short_name;  // glibc: the program's base name, no allocation

namespace heaprec::preload {
namespace {

// %e: the program's name as it was at start-up. program_invocation_short_name points into argv[0],
// which programs rewrite for their process titles (nginx's "nginx: master process ..." over its
// whole command line): read at each dump, it gave one process's profiles different names, and a
// long enough title a name too long to create. Longer names are cut; ExpandOutputTemplate keeps
// them to a safe alphabet.
char g_program_name[128];  // "" until start-up, then constant

// After a privilege drop: where profiles go that the new user may not write at their usual place.
char g_fallback_directory[PATH_MAX];  // "" until set, then constant (set before the drop)

int WriteSnapshot(HeapSnapshot& snapshot, DumpReason reason, int signal_number, const char* target,
                  std::uint64_t taken_ns, WriteOptions options) {
  // Under heaprec run, which rewrites every profile compressed: no deflate in the program.
  if (g_settings.uncompressed) options.gzip = GzipMode::kStore;
  return WithMetadata(snapshot, reason, signal_number, taken_ns,
                      [&](const ProfileMetadata& metadata) {
                        return WriteHeapProfileFile(target, snapshot, metadata, *g_arena, options);
                      });
}

}  // namespace

bool ExpandProfileName(unsigned sequence, char* target, std::size_t capacity) {
  // Empty in an attached process after its detach (attach/injected.cc): no profile is written.
  if (g_settings.output_template[0] == '\0') return false;
  return ExpandOutputTemplate(g_settings.output_template, getpid(), g_program_name,
                              static_cast<long long>(NowNs(CLOCK_REALTIME) / 1000000000ull),
                              sequence, target, capacity);
}

void RememberProgramName() {
  const char* name = program_invocation_short_name != nullptr ? program_invocation_short_name : "";
  std::size_t length = strnlen(name, sizeof(g_program_name) - 1);
  memcpy(g_program_name, name, length);
  g_program_name[length] = '\0';
}

const char* ProgramName() { return g_program_name; }

WriteOptions KeepingNewerFiles() {
  WriteOptions options;
  options.replace = false;
  options.keep_since_ns = static_cast<long long>(g_process_start_ns);
  return options;
}

ProfileFacts GatherFacts(const HeapSnapshot& snapshot, DumpReason reason, int signal_number) {
  const RecorderStats& stats = snapshot.stats();
  ProfileFacts facts;
  facts.pid = static_cast<std::uint64_t>(getpid());
  facts.reason = reason;
  facts.signal_number = signal_number;
  facts.sample_interval = g_interval.load();
  facts.unwinder = UnwinderName();
  facts.samples = stats.samples;
  facts.live_samples = snapshot.sampled_objects();
  facts.dropped = stats.dropped;
  facts.unwind_failures = g_unwind_failures.load();
  facts.truncated_stacks = g_truncated_stacks.load();
  facts.missed_frees = stats.replaced;
  // The profiler's own footprint: what its arena mapped, plus the recorder's static tables.
  facts.profiler_bytes = g_arena->BytesMapped() + sizeof(HeapRecorder) + sizeof(MmapArena);
  if (UnwindCheckCounts check; GetUnwindCheckCounts(&check)) {
    facts.unwind_checked = true;
    facts.unwind_checks = check.checked;
    facts.unwind_mismatches = check.mismatched;
    facts.unwind_handovers = check.handed_over;
  }
  facts.attaches = AttachCount();
  facts.attached_at_s = LastAttachNs() / 1000000000ull;
  AttachFacts attach = CurrentAttachFacts();
  facts.injected = attach.injected;
  facts.attach_heap_known = attach.heap_known;
  facts.held_at_attach = attach.held_at_attach;
  facts.rss_at_attach = attach.rss_at_attach;
  facts.heap_in_use = attach.in_use;
  facts.unattributed = attach.unattributed;
  facts.held_by_size = attach.held_by_size;
  facts.held_walked = attach.held_walked;
  PeakWriteCosts costs = PeakWritesSoFar();
  facts.peak_writes = costs.writes;
  facts.peak_write_us = costs.write_ns / 1000;
  facts.peak_captures = costs.captures;
  facts.peak_capture_us = costs.capture_ns / 1000;
  facts.heap_record_bytes = HeapRecordBytes();
  ReadResidentBytes(&facts.rss, &facts.rss_file);
  // mallinfo2 takes the arenas' locks: not where a signal may have interrupted malloc (a crash or
  // a termination signal ends the process from its handler; _exit is often called from one).
  if (reason != DumpReason::kCrash && reason != DumpReason::kTerminated &&
      reason != DumpReason::kUnderscoreExit) {
    MallocStats stats;
    if (ReadMallocStats(&stats)) {
      facts.malloc_stats = true;
      facts.malloc_in_use = stats.in_use;
      facts.malloc_free = stats.kept_free;
      facts.malloc_arena = stats.arena;
    }
  }
  return facts;
}

int WriteProfile(HeapSnapshot& snapshot, DumpReason reason, int signal_number, const char* target,
                 std::uint64_t taken_ns, const WriteOptions& options) {
  int error = WriteSnapshot(snapshot, reason, signal_number, target, taken_ns, options);
  if ((error != EACCES && error != EPERM) || g_fallback_directory[0] == '\0') return error;
  const char* slash = strrchr(target, '/');
  char fallback[PATH_MAX];
  Appender path(fallback, sizeof(fallback));
  path.Add(g_fallback_directory);
  path.Add("/");
  path.Add(slash != nullptr ? slash + 1 : target);
  if (!path.Finish()) return error;
  return WriteSnapshot(snapshot, reason, signal_number, fallback, taken_ns, options);
}

void SetFallbackDirectory(const char* directory) {
  std::size_t length = strlen(directory);
  if (length < sizeof(g_fallback_directory)) memcpy(g_fallback_directory, directory, length + 1);
}

}  // namespace heaprec::preload
