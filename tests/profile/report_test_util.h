// Helpers shared by the report tests (native and Ruby profiles).
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "analysis/top_table.h"
#include "render/top_table.h"

namespace heaprec::cli {

using namespace ::heaprec::profile;  // NOLINT: tests name the model unqualified
using namespace ::heaprec::analysis;  // NOLINT
using namespace ::heaprec::render;  // NOLINT

inline const ReportRow& Row(const Report& r, const std::string& function) {
  for (const ReportRow& row : r.rows) {
    if (row.function == function) return row;
  }
  throw std::runtime_error("no row " + function);
}

inline void ExpectVariance(double got, double expected) {
  EXPECT_NEAR(got, expected, 1e-9 * expected + 1e-6);
}

}  // namespace heaprec::cli
