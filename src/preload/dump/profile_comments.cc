#include "preload/dump/profile_comments.h"

#include <string.h>

#include "core/appender.h"
#include "schema/profile_schema.h"

namespace heaprec::preload {

ProfileComments::ProfileComments(const ProfileFacts& facts) {
  Begin("heaprec " HEAPREC_VERSION);
  Add(schema::kPidField, facts.pid);
  Add(schema::kReasonField, ReasonName(facts.reason));
  if (facts.signal_number != 0 && sigabbrev_np(facts.signal_number) != nullptr) {
    Add(schema::kSignalField, "SIG", sigabbrev_np(facts.signal_number));
  }
  Add(schema::kSampleIntervalField, facts.sample_interval);
  Add(schema::kUnwinderField, facts.unwinder);
  Begin("");
  Add(schema::kSamplesField, facts.samples);
  Add(schema::kLiveSamplesField, facts.live_samples);
  Add(schema::kDroppedField, facts.dropped);
  Add(schema::kUnwindFailuresField, facts.unwind_failures);
  Add(schema::kTruncatedStacksField, facts.truncated_stacks);
  Add(schema::kMissedFreesField, facts.missed_frees);
  Add(schema::kProfilerBytesField, facts.profiler_bytes);
  if (facts.rss != 0) {
    Add(schema::kRssField, facts.rss);
    Add(schema::kRssFileField, facts.rss_file);
  }
  if (facts.malloc_stats) {
    Add(schema::kMallocInUseField, facts.malloc_in_use);
    Add(schema::kMallocFreeField, facts.malloc_free);
    Add(schema::kMallocArenaField, facts.malloc_arena);
  }
  if (facts.unwind_checked) {
    Add(schema::kUnwindChecksField, facts.unwind_checks);
    Add(schema::kUnwindMismatchesField, facts.unwind_mismatches);
    Add(schema::kUnwindHandoversField, facts.unwind_handovers);
  }
  if (facts.attaches != 0) {
    Begin("");  // what the profile does not cover: the time before the attach
    Add(schema::kAttachedField, facts.attaches);
    Add(schema::kAttachedAtField, facts.attached_at_s);
    if (facts.injected) {
      Add(schema::kInjectedField, 1);
      if (facts.attach_heap_known) Add(schema::kHeldAtAttachField, facts.held_at_attach);
      Add(schema::kRssAtAttachField, facts.rss_at_attach);
      if (facts.attach_heap_known) {
        Add(schema::kHeapInUseField, facts.heap_in_use);
        Add(schema::kUnattributedField, facts.unattributed);
      }
      if (facts.held_by_size[0] != '\0') {
        Add(schema::kHeldWalkedField, facts.held_walked);
        Add(schema::kHeldBySizeField, facts.held_by_size);
      }
    }
  }
  if (IsFinal(facts.reason)) {
    Begin("");  // what the peak profile and the heap record cost
    Add(schema::kPeakWritesField, facts.peak_writes);
    Add(schema::kPeakWriteUsField, facts.peak_write_us);
    Add(schema::kPeakCapturesField, facts.peak_captures);
    Add(schema::kPeakCaptureUsField, facts.peak_capture_us);
    if (facts.heap_record_bytes != 0) Add(schema::kHeapRecordBytesField, facts.heap_record_bytes);
  }
}

void ProfileComments::Begin(const char* text) {
  if (count_ == kCapacity) {
    complete_ = false;
    return;
  }
  storage_[count_][0] = '\0';
  list_[count_] = storage_[count_];
  ++count_;
  Append(text);
}

void ProfileComments::Add(const char* name, std::uint64_t value) {
  char digits[24];
  Appender number(digits, sizeof(digits));
  number.AddUnsigned(value, 1);
  number.Finish();  // always fits
  Append(name, "=", digits);
}

void ProfileComments::Add(const char* name, const char* value, const char* more) {
  Append(name, "=", value, more);
}

void ProfileComments::Append(const char* a, const char* b, const char* c, const char* d) {
  if (count_ == 0) return;
  char* out = storage_[count_ - 1];
  std::size_t used = strlen(out);
  Appender text(out + used, kLength - used);
  if (used != 0) text.Add(" ");
  text.Add(a);
  text.Add(b);
  text.Add(c);
  text.Add(d);
  if (!text.Finish()) {
    out[used] = '\0';
    complete_ = false;
  }
}

}  // namespace heaprec::preload
