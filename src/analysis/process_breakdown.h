// Of a merged profile (profile/merge.h), how much each process's profile holds: `heaprec report
// --by-process`. Each input's total of one sample type with its sampling variance, and its share of
// the whole; ranked by value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profile_header.h"
#include "profile/profile.h"

namespace heaprec::analysis {

struct ProcessInput {
  std::string label;  // "pid 1234 (server)", or a file name
  const profile::Profile* profile = nullptr;
};

struct ProcessRow {
  std::string label;
  int64_t value = 0;
  double variance = 0;  // NaN when unknown (a sample of unknown object size)
};

struct ProcessBreakdown {
  profile::ValueType sample_type{};
  bool sampled = false;  // values are estimates: rows carry a variance
  int64_t total = 0;
  double total_variance = 0;
  std::vector<ProcessRow> rows;  // by decreasing value, then label
  ProfileHeader header{};        // of the first input (the merged inputs share their sampling)
};

// The breakdown of `sample_index` ("" = the first profile's default). Throws what SelectSampleIndex
// throws.
ProcessBreakdown ComputeProcessBreakdown(const std::vector<ProcessInput>& inputs,
                                         const std::string& sample_index);

}  // namespace heaprec::analysis
