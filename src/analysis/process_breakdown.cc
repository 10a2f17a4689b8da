#include "analysis/process_breakdown.h"

#include <algorithm>

#include "analysis/profile_view.h"

namespace heaprec::analysis {

ProcessBreakdown ComputeProcessBreakdown(const std::vector<ProcessInput>& inputs,
                                         const std::string& sample_index) {
  ProcessBreakdown b;
  if (inputs.empty()) return b;
  b.header = HeaderOf(*inputs.front().profile);
  // Merged profiles share their sample types (profile::CheckMergeable), so one index fits all.
  const size_t index = SelectSampleIndex(*inputs.front().profile, sample_index);
  b.sample_type = inputs.front().profile->sample_types[index];
  for (const ProcessInput& in : inputs) {
    const profile::Profile& p = *in.profile;
    ProfileView view(p);
    b.sampled = b.sampled || view.IsEstimate(index);
    ProcessRow row{.label = in.label};
    for (const profile::Sample& s : p.samples) {
      row.value += s.values[index];
      row.variance += view.Variance(s, index);
    }
    b.total += row.value;
    b.total_variance += row.variance;
    b.rows.push_back(std::move(row));
  }
  std::stable_sort(b.rows.begin(), b.rows.end(), [](const ProcessRow& x, const ProcessRow& y) {
    return x.value != y.value ? x.value > y.value : x.label < y.label;
  });
  return b;
}

}  // namespace heaprec::analysis
