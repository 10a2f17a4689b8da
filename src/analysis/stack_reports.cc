#include "analysis/stack_reports.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

using profile::Profile;
using profile::Sample;

bool IsBaseSample(const Sample& s) {
  const std::string* base = StringLabel(s, schema::kPprofBaseLabel);
  return base != nullptr && *base == "true";
}

// `p` with only its BASE samples (`base`), their values negated back, or only its NEW ones.
Profile DifferenceSide(const Profile& p, bool base) {
  Profile side = p;
  side.samples.clear();
  for (const Sample& s : p.samples) {
    if (IsBaseSample(s) != base) continue;
    side.samples.push_back(s);
    if (base) {
      for (int64_t& v : side.samples.back().values) {
        v = v == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -v;
      }
    }
  }
  return side;
}

}  // namespace

StackReports ComputeStackReports(const Profile& profile, const std::string& sample_index,
                                 const ViewOptions& view) {
  // Throws UnknownSampleIndexError for the whole profile, before any side is computed.
  SelectSampleIndex(profile, sample_index);
  if (std::none_of(profile.samples.begin(), profile.samples.end(), IsBaseSample)) {
    return {ComputeReport(profile, sample_index, /*with_stacks=*/true, view), std::nullopt};
  }
  return {ComputeReport(DifferenceSide(profile, /*base=*/false), sample_index, true, view),
          ComputeReport(DifferenceSide(profile, /*base=*/true), sample_index, true, view)};
}

}  // namespace heaprec::analysis
