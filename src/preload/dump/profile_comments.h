// The comments every profile carries, two of them so that pprof's header stays short: first what
// the profile is (the tool's version, the process, why it was written, how it was sampled and
// unwound), then the counters a user needs to judge it (how much was sampled, what was lost). Each
// field is NAME=VALUE with a schema field name (schema/profile_schema.h), separated by spaces
// (analysis::CommentField reads them).
//
// Fixed storage, so that dumps never call malloc; pure and async-signal-safe. The facts are
// gathered by profile_writer.cc; keeping the text apart from the gathering lets a test check that
// the longest comment there can be (every counter at 20 digits) fits (tests/preload).
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/dump/dump_reason.h"

namespace heaprec::preload {

// What a profile says about itself.
struct ProfileFacts {
  std::uint64_t pid = 0;
  DumpReason reason = DumpReason::kApi;
  int signal_number = 0;  // the ending signal of a crash or termination, else 0
  std::uint64_t sample_interval = 0;
  const char* unwinder = "";
  std::uint64_t samples = 0;
  std::uint64_t live_samples = 0;
  std::uint64_t dropped = 0;
  std::uint64_t unwind_failures = 0;
  std::uint64_t truncated_stacks = 0;
  std::uint64_t missed_frees = 0;
  std::uint64_t profiler_bytes = 0;
  bool unwind_checked = false;  // HEAPREC_UNWIND=check: the three counts below are meaningful
  std::uint64_t unwind_checks = 0;
  std::uint64_t unwind_mismatches = 0;
  std::uint64_t unwind_handovers = 0;
  std::uint64_t attaches = 0;  // 0: not started dormant; then attached_at_s is meaningless
  std::uint64_t attached_at_s = 0;
  bool injected = false;           // loaded by `heaprec attach`: the four below are meaningful
  bool attach_heap_known = false;  // glibc's heap: held_at_attach, heap_in_use, unattributed
  std::uint64_t held_at_attach = 0;
  std::uint64_t rss_at_attach = 0;
  std::uint64_t heap_in_use = 0;
  std::uint64_t unattributed = 0;
  const char* held_by_size = "";  // "" when the attaching command did not read the heap
  std::uint64_t held_walked = 0;
  std::uint64_t peak_writes = 0;  // written into final profiles only
  std::uint64_t peak_write_us = 0;
  std::uint64_t peak_captures = 0;
  std::uint64_t peak_capture_us = 0;
  std::uint64_t heap_record_bytes = 0;  // 0: no record
  std::uint64_t rss = 0;                // 0: unknown (no /proc)
  std::uint64_t rss_file = 0;
  bool malloc_stats = false;  // glibc's accounting was read: the three below are meaningful
  std::uint64_t malloc_in_use = 0;
  std::uint64_t malloc_free = 0;
  std::uint64_t malloc_arena = 0;
};

class ProfileComments {
 public:
  // The comments for `facts`.
  explicit ProfileComments(const ProfileFacts& facts);
  ProfileComments(const ProfileComments&) = delete;
  ProfileComments& operator=(const ProfileComments&) = delete;

  const char* const* list() const { return list_; }
  std::size_t count() const { return count_; }
  // False when a field did not fit and was left out.
  bool complete() const { return complete_; }

  static constexpr std::size_t kCapacity = 4;

 private:
  static constexpr std::size_t kLength = 768;

  // Starts the next comment with `text`.
  void Begin(const char* text);
  void Add(const char* name, std::uint64_t value);
  // NAME=VALUE, the value possibly in two parts ("signal", "SIG", "SEGV").
  void Add(const char* name, const char* value, const char* more = "");
  // Appends a field to the current comment, after a space unless it is the first.
  void Append(const char* a, const char* b = "", const char* c = "", const char* d = "");

  char storage_[kCapacity][kLength];
  const char* list_[kCapacity];
  std::size_t count_ = 0;
  bool complete_ = true;
};

}  // namespace heaprec::preload
