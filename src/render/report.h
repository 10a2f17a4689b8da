// The report (analysis/report.h) as `heaprec report` and the end of `heaprec run` print it, the
// top table: a header describing the profile, then one row per function, like `pprof -top`, with
// the 95% interval of every sampled value; as text or as JSON.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "analysis/report.h"

namespace heaprec::render {

enum class Format { kText, kJson };

struct ReportOptions {
  std::string source{};  // the profile's file name, shown in the header; "" to omit
  size_t top = 20;       // rows to print; 0 = all
  Format format = Format::kText;
};

// Prints the header and the top rows. The table leaves out the rows that only lead to the sites
// (ReportRow::context).
void PrintReport(const analysis::Report& report, const ReportOptions& options, std::ostream& out);

}  // namespace heaprec::render
