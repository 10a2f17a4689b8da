// `heaprec report --by-process`: the per-process breakdown of merged profiles
// (analysis/process_breakdown.h), as text or JSON.
#pragma once

#include <ostream>
#include <string>

#include "analysis/process_breakdown.h"
#include "render/report.h"

namespace heaprec::render {

// One row per process: its value, ± its 95% interval when sampled, its share of the total.
void PrintProcessBreakdown(const analysis::ProcessBreakdown& breakdown,
                           const ReportOptions& options, std::ostream& out);

}  // namespace heaprec::render
