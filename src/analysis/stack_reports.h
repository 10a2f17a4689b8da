// The stacks of a profile as `heaprec report --format folded` prints them (render/folded.h): its
// report with stacks (analysis/report.h) or, for a difference profile, whose BASE samples are
// negated and labelled pprof::base=true (`heaprec diff -o`, `pprof -diff_base -proto`), one report
// per side, BASE's values negated back, so that each side's stacks are counted as recorded.
#pragma once

#include <optional>
#include <string>

#include "analysis/profile_view.h"
#include "analysis/report.h"
#include "profile/profile.h"

namespace heaprec::analysis {

struct StackReports {
  Report next;                 // the profile's, or a difference's NEW side
  std::optional<Report> base;  // a difference's BASE side; none for any other profile
};

// The reports (with stacks) of `sample_index` ("" = the profile's default), each sample counted
// from its allocation site, its frames named as `view` says. Throws UnknownSampleIndexError.
StackReports ComputeStackReports(const profile::Profile& profile, const std::string& sample_index,
                                 const ViewOptions& view = {});

}  // namespace heaprec::analysis
