// `heaprec leaks`'s outputs (analysis/leak_series.h): the ranked sites of each series as text or
// JSON, an SVG chart of live bytes over time, and an HTML page holding charts and tables.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/leak_series.h"

namespace heaprec::render {

struct LeakReportOptions {
  size_t top = 10;  // rows per series; 0 = all
  analysis::LeakOptions analysis;
};

void PrintLeaksText(const std::vector<analysis::LeakSeries>& series,
                    const LeakReportOptions& options, std::ostream& out);
void PrintLeaksJson(const std::vector<analysis::LeakSeries>& series,
                    const LeakReportOptions& options, std::ostream& out);

// A standalone SVG chart of the live bytes of the first `sites` sites of `series` over time, with
// 95% error bars, the fitted line of each suspect, axes with units and a legend.
std::string LeaksSvg(const analysis::LeakSeries& series, size_t sites);

// A self-contained HTML page: per series, its chart and table.
std::string LeaksHtml(const std::vector<analysis::LeakSeries>& series,
                      const LeakReportOptions& options, size_t chart_sites);

// How the series was sampled: "sampled every 512.0 KiB", "sampled 1 in 1000 objects" or "exact".
std::string DescribeSampling(const analysis::LeakSeries& series);

// A slope's t statistic, one decimal, "inf" / "-inf" at the bound (analysis::kMaxT).
std::string FormatT(double t);

}  // namespace heaprec::render
