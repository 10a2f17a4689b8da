// The top table (analysis/report.h) as `heaprec report` and the end of `heaprec run` print it:
// a header describing the profile, then one row per function, like `pprof -top`, with the 95%
// interval of every sampled value; as text or as JSON.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "analysis/profile_view.h"
#include "profile/profile.h"

namespace heaprec::render {

enum class Format { kText, kJson };

struct ReportOptions {
  std::string source;        // the profile's file name, shown in the header; "" to omit
  std::string sample_index;  // "" = the profile's default_sample_type, else its last type
  size_t top = 20;           // rows to print; 0 = all
  Format format = Format::kText;
  analysis::ViewOptions view{};  // names, lines and the site rule
};

// Prints the header and the top rows. Throws analysis::UnknownSampleIndexError before printing
// anything.
void PrintReport(const profile::Profile& profile, const ReportOptions& options, std::ostream& out);

}  // namespace heaprec::render
