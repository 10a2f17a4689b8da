// The comments every profile carries (src/preload/dump/profile_comments.h): fixed storage, so the
// longest there can be must fit, field by field.
#include "preload/dump/profile_comments.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <set>
#include <sstream>
#include <string>

#include "schema/profile_schema.h"

namespace heaprec::preload {
namespace {

std::string Joined(const ProfileComments& comments) {
  std::string text;
  for (std::size_t i = 0; i < comments.count(); ++i) text += std::string(comments.list()[i]) + "\n";
  return text;
}

// The NAME of every NAME=VALUE field.
std::set<std::string> FieldNames(const std::string& text) {
  std::set<std::string> names;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (std::size_t equals = word.find('='); equals != std::string::npos) {
      names.insert(word.substr(0, equals));
    }
  }
  return names;
}

// Every optional part present and every counter at its widest (20 digits).
ProfileFacts LongestFacts() {
  constexpr std::uint64_t kMax = UINT64_MAX;
  ProfileFacts facts;
  facts.pid = kMax;
  facts.reason = DumpReason::kUnderscoreExit;  // a final profile: it also carries the peak's costs
  facts.signal_number = SIGSEGV;
  facts.sample_interval = kMax;
  facts.unwinder = "frame-pointers";
  facts.samples = facts.live_samples = facts.dropped = facts.unwind_failures = kMax;
  facts.truncated_stacks = facts.missed_frees = facts.profiler_bytes = kMax;
  facts.unwind_checked = true;
  facts.unwind_checks = facts.unwind_mismatches = facts.unwind_handovers = kMax;
  facts.attaches = facts.attached_at_s = kMax;
  facts.injected = true;
  facts.attach_heap_known = true;
  facts.held_at_attach = facts.rss_at_attach = facts.heap_in_use = facts.unattributed = kMax;
  facts.held_walked = kMax;
  // Six size classes with 20-digit counts: the widest the library writes (injected.cc).
  static const std::string kWidestClasses = [] {
    std::string classes;
    for (int i = 0; i < 6; ++i) {
      classes += (i == 0 ? "" : ",") + std::to_string(40 + i) + ":" + std::to_string(kMax) + ":" +
                 std::to_string(kMax);
    }
    return classes;
  }();
  facts.held_by_size = kWidestClasses.c_str();
  facts.peak_writes = facts.peak_write_us = kMax;
  facts.peak_captures = facts.peak_capture_us = facts.heap_record_bytes = kMax;
  facts.rss = facts.rss_file = kMax;
  facts.malloc_stats = true;
  facts.malloc_in_use = facts.malloc_free = facts.malloc_arena = kMax;
  return facts;
}

TEST(ProfileCommentsTest, TheLongestCommentsThereCanBeFitWithEveryField) {
  ProfileComments comments(LongestFacts());
  EXPECT_TRUE(comments.complete());
  ASSERT_EQ(comments.count(), 4u);
  std::string text = Joined(comments);
  EXPECT_EQ(FieldNames(text).size(), 34u) << text;
  for (const char* field : {schema::kPidField,
                            schema::kReasonField,
                            schema::kSignalField,
                            schema::kSampleIntervalField,
                            schema::kUnwinderField,
                            schema::kSamplesField,
                            schema::kLiveSamplesField,
                            schema::kDroppedField,
                            schema::kUnwindFailuresField,
                            schema::kTruncatedStacksField,
                            schema::kMissedFreesField,
                            schema::kProfilerBytesField,
                            schema::kHeldWalkedField,
                            schema::kHeldBySizeField,
                            schema::kUnwindChecksField,
                            schema::kUnwindMismatchesField,
                            schema::kUnwindHandoversField,
                            schema::kAttachedField,
                            schema::kAttachedAtField,
                            schema::kPeakWritesField,
                            schema::kPeakWriteUsField,
                            schema::kPeakCapturesField,
                            schema::kPeakCaptureUsField,
                            schema::kHeapRecordBytesField,
                            schema::kRssField,
                            schema::kRssFileField,
                            schema::kMallocInUseField,
                            schema::kMallocFreeField,
                            schema::kMallocArenaField}) {
    EXPECT_EQ(FieldNames(text).count(field), 1u) << field << " missing from:\n" << text;
  }
  EXPECT_NE(text.find("signal=SIGSEGV"), std::string::npos) << text;
  EXPECT_NE(text.find("samples=18446744073709551615"), std::string::npos) << text;
}

TEST(ProfileCommentsTest, OptionalFieldsAppearOnlyWhenTheyMeanSomething) {
  ProfileFacts facts;
  facts.reason = DumpReason::kInterval;  // not final: no peak costs
  facts.unwinder = "dwarf";
  ProfileComments comments(facts);
  std::string text = Joined(comments);
  EXPECT_TRUE(comments.complete());
  EXPECT_EQ(text.rfind("heaprec ", 0), 0u) << text;
  EXPECT_NE(text.find("reason=interval"), std::string::npos) << text;
  for (const char* absent : {schema::kSignalField, schema::kUnwindChecksField,
                             schema::kAttachedField, schema::kPeakWritesField}) {
    EXPECT_EQ(FieldNames(text).count(absent), 0u) << absent << " in:\n" << text;
  }
}

}  // namespace
}  // namespace heaprec::preload
