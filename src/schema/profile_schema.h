// The vocabulary of heaprec's profiles, in one place for every writer (the in-process encoder in
// src/core, the preload library's dumps, the Ruby extension) and every reader (src/analysis, the
// CLI): sample types and units, period types, label keys, the comment fields, the reasons a
// profile is written, and the file names. Header-only and allocation-free, so that code inside
// the profiled process can use it.
#pragma once

#include <string_view>

namespace heaprec::schema {

// Sample types (Go's heap profile names) and their units.
inline constexpr char kAllocObjects[] = "alloc_objects";
inline constexpr char kAllocSpace[] = "alloc_space";
inline constexpr char kInuseObjects[] = "inuse_objects";
inline constexpr char kInuseSpace[] = "inuse_space";
inline constexpr char kCountUnit[] = "count";
inline constexpr char kBytesUnit[] = "bytes";
inline constexpr char kNanosecondsUnit[] = "nanoseconds";

// The two halves of each pair: TYPE = PREFIX + SUFFIX (inuse_ + space).
inline constexpr char kInusePrefix[] = "inuse_";
inline constexpr char kAllocPrefix[] = "alloc_";
inline constexpr char kSpaceSuffix[] = "space";
inline constexpr char kObjectsSuffix[] = "objects";

// Period types: they tell the sampling model (profile/sampling_error.h). Native profiles are
// sampled per byte (space/bytes), the Ruby front end's per object (objects/count).
inline constexpr char kPerBytePeriodType[] = "space";
inline constexpr char kPerObjectPeriodType[] = "objects";

// The heap over time, in every profile: one comment, which pprof's header leaves out (it skips
// comments starting with '#'), pprof -comments prints and pprof's merge keeps:
//   #heaprec-timeline v=1 start_ns=S interval=I peak_ms=P peak=B points=T,L,M,R,A;T,L,M,R,A;...
// S: CLOCK_REALTIME ns of the timeline's start; I: the sampling interval (1 in exact mode); P, B:
// when (ms after S) the live-heap estimate was highest, and that estimate. Each point, at T ms
// after S in time order: L the live-heap estimate then, M the highest estimate since the point
// before, R the resident bytes (0: unknown), A the bytes allocated since the start (an estimate,
// freed ones too). Points are at least 100 ms apart; a long run's are merged two by two, so the
// spacing doubles. An estimate's 95% interval is +-1.96 * sqrt(I * L).
inline constexpr char kTimelinePrefix[] = "#heaprec-timeline v=1";

// Sample labels. `bytes`: the object size (numeric, as Go writes it). `age_ns`: the age of the
// sample's oldest live object when the profile was taken (its time_nanos), in `nanoseconds`, which
// pprof shows as a duration. `class`: a Ruby object's class.
inline constexpr char kBytesLabel[] = "bytes";
inline constexpr char kAgeLabel[] = "age_ns";
inline constexpr char kClassLabel[] = "class";
// `temporary_objects`: of the allocations a sample counts, how many were temporary (freed by their
// thread before it allocated anything else), in `count`; only on samples that have some.
inline constexpr char kTemporaryLabel[] = "temporary_objects";
// What profiles written before `age_ns` carry instead: when the oldest live object was allocated
// (CLOCK_REALTIME ns). Readers still accept it (analysis/object_age.h).
inline constexpr char kOldestAllocLabel[] = "oldest_alloc_ns";
// `gc_age`: how many GCs a Ruby object has survived, in `gc_cycles`.
inline constexpr char kGcAgeLabel[] = "gc_age";
inline constexpr char kGcCyclesUnit[] = "gc_cycles";
// `byte_interval`: on a sample of native blocks in a profile whose period counts objects (the Ruby
// front end's native bytes), the mean interval in bytes its blocks were sampled at, in `bytes`:
// its values are estimates under the per-byte model (profile/sampling_error.h), not per object.
inline constexpr char kByteIntervalLabel[] = "byte_interval";
// pprof's own convention for the base side of a difference (`pprof -diff_base`).
inline constexpr char kPprofBaseLabel[] = "pprof::base";

// Comment fields, "NAME=VALUE", several to a comment line, separated by spaces.
inline constexpr char kPidField[] = "pid";
inline constexpr char kReasonField[] = "reason";
// How many profiles a merged profile holds (profile/merge.h): the CLI writes it, no process does.
inline constexpr char kMergedField[] = "merged";
inline constexpr char kSampleIntervalField[] = "sample_interval";
// What the native profiler adds for judging a profile: samples taken so far, samples live now,
// samples lost to exhausted profiler memory, stacks that could not be unwound or were cut at
// --max-depth, tracked addresses reused behind heaprec's back, heaprec's own memory; the ending
// signal (signal=SIGSEGV) and the unwinder (unwinder=dwarf); with --unwind check, stacks compared,
// disagreements and stacks handed over to libgcc; in a final profile, the peak profile's writes
// and the time they took.
inline constexpr char kSamplesField[] = "samples";
inline constexpr char kLiveSamplesField[] = "live_samples";
inline constexpr char kDroppedField[] = "dropped";
inline constexpr char kUnwindFailuresField[] = "unwind_failures";
inline constexpr char kTruncatedStacksField[] = "truncated_stacks";
inline constexpr char kMissedFreesField[] = "missed_frees";
inline constexpr char kProfilerBytesField[] = "profiler_bytes";
inline constexpr char kSignalField[] = "signal";
inline constexpr char kUnwinderField[] = "unwinder";
inline constexpr char kUnwindChecksField[] = "unwind_checks";
inline constexpr char kUnwindMismatchesField[] = "unwind_mismatches";
inline constexpr char kUnwindHandoversField[] = "unwind_handovers";
inline constexpr char kPeakWritesField[] = "peak_writes";
inline constexpr char kPeakWriteUsField[] = "peak_write_us";
// The peak copies taken in memory, on the allocating threads, and the time they took (the heap
// record's copy included); and the heap record's file size (preload/record/heap_record.h).
inline constexpr char kPeakCapturesField[] = "peak_captures";
inline constexpr char kPeakCaptureUsField[] = "peak_capture_us";
inline constexpr char kHeapRecordBytesField[] = "heap_record_bytes";
// A final profile written from the heap record because the process could not write it: why its
// own write failed (the errno's name, EISDIR, ENOSPC).
inline constexpr char kFinalWriteErrorField[] = "final_write_error";
// The memory the heap lives in, when the profile was written: the resident set and, of it, the
// part backed by files (libraries, mapped files: /proc/self/statm); with glibc, its own accounting
// (mallinfo2): bytes in the chunks the program holds, free bytes it keeps in its arenas, and what
// its arenas and mmapped chunks span. With the live-heap estimate they say how much of the RSS the
// program's heap explains. mallinfo2's are absent where a signal may have interrupted malloc (a
// crash, a termination signal, _exit).
inline constexpr char kRssField[] = "rss";
inline constexpr char kRssFileField[] = "rss_file";
inline constexpr char kMallocInUseField[] = "malloc_in_use";
inline constexpr char kMallocFreeField[] = "malloc_free";
inline constexpr char kMallocArenaField[] = "malloc_arena";
// In a process started dormant (HEAPREC_DORMANT) that was attached: how many times, and when the
// latest attach was (Unix seconds). Such a profile covers only allocations sampled while attached:
// blocks allocated before the first attach (or while detached) are not in it.
inline constexpr char kAttachedField[] = "attached";
inline constexpr char kAttachedAtField[] = "attached_at";
// In a process `heaprec attach` loaded heaprec into (injected=1): glibc's bytes in use (mallinfo2)
// and the resident set at the (first) attach, glibc's bytes in use at the latest look (every 2 s),
// and of those the part no sample since the attach accounts for: blocks allocated before it,
// still live (it only shrinks). held_at_attach, heap_in_use and unattributed are absent where the
// allocator is not glibc's: that heap is not known.
inline constexpr char kInjectedField[] = "injected";
inline constexpr char kHeldAtAttachField[] = "held_at_attach";
inline constexpr char kRssAtAttachField[] = "rss_at_attach";
inline constexpr char kHeapInUseField[] = "heap_in_use";
inline constexpr char kUnattributedField[] = "unattributed";
// What glibc's heap held at the attach by block size, as `heaprec attach` read it from outside
// (cli/glibc_heap.h): held_walked, the in-use bytes the walk found (chunk sizes, as mallinfo2
// counts them); held_by_size, its largest size classes by bytes, "CLASS:BYTES:BLOCKS,..." (at
// most six), class K holding blocks of (2^(K-1), 2^K] bytes requested. Absent when not read.
inline constexpr char kHeldWalkedField[] = "held_walked";
inline constexpr char kHeldBySizeField[] = "held_by_size";
// The Ruby front end's: its N, how it learns which sampled objects are alive (liveness=object_id
// or weak_map, docs/design/ruby.md), objects sampled, skipped (pending queue full, or profiler
// memory exhausted), tracked now, and stacks stored.
inline constexpr char kSampleEveryField[] = "sample_every";
inline constexpr char kLivenessField[] = "liveness";
inline constexpr char kSampledField[] = "sampled";
inline constexpr char kSkippedField[] = "skipped";
inline constexpr char kTrackedField[] = "tracked";
inline constexpr char kStacksField[] = "stacks";

// Why a profile was written (its reason= field and its manifest entry). The first four are final
// profiles, written as the process ends; the others while it runs.
inline constexpr char kReasonExit[] = "exit";
inline constexpr char kReasonUnderscoreExit[] = "_exit";
inline constexpr char kReasonCrash[] = "crash";
inline constexpr char kReasonTerminated[] = "terminated";
// Written by `heaprec recover` (or `heaprec run`) from the heap record of a process that died
// without running heaprec's code (SIGKILL, the OOM killer): the heap at death.
inline constexpr char kReasonKilled[] = "killed";
inline constexpr char kReasonInterval[] = "interval";
inline constexpr char kReasonSignal[] = "signal";
inline constexpr char kReasonApi[] = "api";
inline constexpr char kReasonPeak[] = "peak";
inline constexpr char kReasonAbove[] = "above";
// Written by a process `heaprec attach` loaded heaprec into: at `heaprec detach`, and at `heaprec
// dump PID` (to the file it names).
inline constexpr char kReasonDetach[] = "detach";
inline constexpr char kReasonRequest[] = "request";
inline constexpr char kReasonHttp[] = "http";  // served over HTTP (HEAPREC_HTTP), not a file

// Whether a reason= names a process's final profile, the heap it ended with.
constexpr bool IsFinalReason(std::string_view reason) {
  return reason == kReasonExit || reason == kReasonUnderscoreExit || reason == kReasonCrash ||
         reason == kReasonTerminated || reason == kReasonKilled;
}

// File names: NAME.pb.gz; a peak profile is NAME.peak.pb.gz. Readers also accept raw NAME.pb.
inline constexpr char kProfileSuffix[] = ".pb.gz";
inline constexpr char kRawProfileSuffix[] = ".pb";
inline constexpr char kPeakInfix[] = ".peak";

}  // namespace heaprec::schema
