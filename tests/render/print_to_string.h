// The text or JSON the renderers print, as a string, for the tests of render/.
#pragma once

#include <sstream>
#include <string>

#include "profile/profile.h"
#include "render/diff.h"
#include "render/report.h"

namespace heaprec::testing {

// What PrintReport prints.
inline std::string Print(const profile::Profile& p, const render::ReportOptions& options) {
  std::ostringstream out;
  render::PrintReport(p, options, out);
  return out.str();
}

// What PrintDiff prints.
inline std::string Print(const profile::Profile& base, const profile::Profile& next,
                         const render::DiffOptions& options) {
  std::ostringstream out;
  render::PrintDiff(base, next, options, out);
  return out.str();
}

}  // namespace heaprec::testing
