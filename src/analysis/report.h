// The "top functions" table of a heap profile, behind `heaprec report` and the summary of
// `heaprec run` (render/report.h prints it), and the per-function and per-stack aggregation that
// `heaprec diff` compares. Mirrors `pprof -top`: flat counts a sample for its leaf function
// only, cum for every function on its stack (once per sample).
//
// Sampled profiles (period > 1) carry a 95% interval with every value: each pprof sample's variance
// comes from ProfileView::Variance (profile/sampling_error.h, under the profile's own sampling
// model: per byte for native profiles, per object for Ruby's), and a row adds the variances of the
// samples it counts (flat: the samples whose leaf is the function; cum: the samples with the
// function anywhere on the stack, each once). The samples are disjoint groups of independently
// sampled objects, so the variances add exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profile_header.h"
#include "analysis/profile_view.h"
#include "profile/profile.h"

namespace heaprec::analysis {

// One function (analysis/profile_view.h's FrameId: its names) and its values. Its `line` is the
// line that holds most of its value (flat when it has some, else cum), unless it is one row per
// line (ViewOptions::lines).
struct ReportRow : FrameId {
  int64_t flat = 0;
  int64_t cum = 0;
  // A frame that only leads to the sites, not one itself (no flat): the runtime's
  // (FrameId::runtime: _start, __libc_start_main, start_thread, std::thread's invoker...) and
  // `main`. Tables leave these out so they do not crowd the cumulative ranking; stacks keep them.
  bool context = false;
  // Estimated variances of flat and cum: 0 in exact mode, NaN when a counted sample's object size
  // is unknown (ProfileView::ObjectSize).
  double flat_variance = 0;
  double cum_variance = 0;
};

// One distinct call stack from its allocation site outwards (as a sequence of rows and the line
// each is at, so inlined frames are expanded and samples that differ only in addresses or object
// sizes are merged).
struct ReportStack {
  std::vector<size_t> frames;  // indexes into Report::rows, leaf first
  std::vector<int64_t> lines;  // the line of each frame in this stack (0 if unknown)
  int64_t value = 0;
  double variance = 0;
};

// The part of the total held by objects of one class: the samples whose string label `class` (set
// by the Ruby front end) has that value.
struct ReportClass {
  std::string name;
  int64_t value = 0;
  double variance = 0;
};

struct Report {
  ProfileHeader header;  // of the profile it was computed from
  profile::ValueType sample_type;
  // Whether the values are sampling estimates with intervals: the profile is sampled (period > 1)
  // and the sample type is one heaprec samples (inuse_/alloc_ space/objects). False in exact mode.
  bool sampled = false;
  int64_t total = 0;
  double total_variance = 0;
  size_t samples = 0;
  std::vector<ReportRow> rows;      // all rows, by decreasing |flat|, then |cum|, then name
  std::vector<ReportStack> stacks;  // only when asked for: by decreasing |value|, then frames
  // By decreasing |value|, then name; empty when no sample has a `class` label (native profiles).
  // Samples without one count under "(unknown)".
  std::vector<ReportClass> classes;
};

// Whether `function` is the program's entry point ("main", Rust's "crate::main", Ruby's "<main>"),
// which holds everything and says nothing unless it allocates itself.
bool IsEntryPoint(const std::string& function);

// Throws UnknownSampleIndexError. `with_stacks` also fills Report::stacks. Each sample counts from
// its allocation site (ProfileView::SiteStack).
Report ComputeReport(const profile::Profile& profile, const std::string& sample_index,
                     bool with_stacks = false, const ViewOptions& view_options = {});

}  // namespace heaprec::analysis
