// The text or JSON the renderers print of a profile's model, as a string, for the tests of render/.
#pragma once

#include <sstream>
#include <string>

#include "analysis/diff.h"
#include "analysis/report.h"
#include "profile/profile.h"
#include "render/diff.h"
#include "render/report.h"

namespace heaprec::test_support {

// What PrintReport prints of the report of `p`.
inline std::string Print(const profile::Profile& p, const render::ReportOptions& options,
                         const std::string& sample_index = "",
                         const analysis::ViewOptions& view = {}) {
  std::ostringstream out;
  render::PrintReport(analysis::ComputeReport(p, sample_index, false, view), options, out);
  return out.str();
}

// What PrintDiff prints of the diff of `base` and `next`.
inline std::string Print(const profile::Profile& base, const profile::Profile& next,
                         const render::DiffOptions& options, const std::string& sample_index = "",
                         const analysis::ViewOptions& view = {}) {
  std::ostringstream out;
  render::PrintDiff(analysis::ComputeDiff(base, next, sample_index, view), options, out);
  return out.str();
}

}  // namespace heaprec::test_support
