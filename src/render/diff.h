// `heaprec diff`'s rankings (analysis/diff.h): the totals, the functions by change in cum and in
// flat, and the stacks, each change marked when it is larger than sampling noise; text or JSON.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "analysis/diff.h"
#include "render/report.h"

namespace heaprec::render {

struct DiffOptions {
  std::string base_source{};  // file names for the header; "" to omit
  std::string next_source{};
  size_t top = 10;  // entries per ranking; 0 = all
  Format format = Format::kText;
};

// Prints the totals and the rankings.
void PrintDiff(const analysis::Diff& diff, const DiffOptions& options, std::ostream& out);

}  // namespace heaprec::render
