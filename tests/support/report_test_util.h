// Helpers of the tests of the report (analysis/report.h) and of its outputs, on native and
// Ruby profiles.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "analysis/report.h"

namespace heaprec::test_support {

inline const analysis::ReportRow& Row(const analysis::Report& r, const std::string& function) {
  for (const analysis::ReportRow& row : r.rows) {
    if (row.function == function) return row;
  }
  throw std::runtime_error("no row " + function);
}

inline void ExpectVariance(double got, double expected) {
  EXPECT_NEAR(got, expected, 1e-9 * expected + 1e-6);
}

}  // namespace heaprec::test_support
