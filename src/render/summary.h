// The run story (analysis/run_story.h) as the few lines `heaprec run` ends with and `heaprec
// summary` prints: the heap over time as a sparkline with its peak, what was never freed, what was
// freed before the exit, the resident set explained, the temporaries, the sizes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/run_story.h"

namespace heaprec::render {

struct SummaryOptions {
  // Block characters (▁▂▃▄▅▆▇█) for the sparkline and "±" / "≈"; else ASCII only (a terminal or
  // pipe whose locale is not UTF-8).
  bool unicode = true;
  size_t sparkline_width = 40;
};

void PrintRunStory(const analysis::RunStory& story, const SummaryOptions& options,
                   std::ostream& out);

// The sparkline of `values`, `width` columns (each the highest of the values it covers, so that a
// spike never vanishes), scaled from 0 to the highest; "" without values.
std::string Sparkline(const std::vector<double>& values, size_t width, bool unicode);

// The sparkline of `timeline`'s live-heap estimates, each point's highest since the point before,
// then the estimate at the last point.
std::string Sparkline(const analysis::Timeline& timeline, size_t width, bool unicode);

}  // namespace heaprec::render
