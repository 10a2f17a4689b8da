// The comparison behind `heaprec diff BASE NEW` (render/diff.h prints it): what grew and what
// shrank between two heap profiles, per function (by cum and by flat) and per full stack, with each
// change tested against sampling noise; and the difference as a pprof file in the form `pprof
// -diff_base` builds.
//
// Noise. Each side's value is a sampling estimate with an estimated variance (analysis/report.h,
// profile/sampling_error.h, under the profiles' sampling model: per byte for native profiles, per
// object for Ruby's; two profiles of different models have different period types and are not
// compared); the two profiles are independent samples, so the change NEW - BASE
// has variance Var_base + Var_new and a change is significant, larger than sampling noise, when
//
//     |NEW - BASE| > 1.96 * sqrt(Var_base + Var_new)
//
// (a two-sided test at the 5% level under the normal approximation). Between two exact profiles
// (period 1) both variances are 0 and every nonzero change is significant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/profile_header.h"
#include "analysis/report.h"
#include "profile/profile.h"

namespace heaprec::analysis {

// The two profiles cannot be compared (their sample types or period types differ). what() is one
// line naming both.
class IncompatibleProfilesError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Significance {
  kSignificant,  // |change| > 1.96·sqrt(Var_base + Var_new) (exact: change != 0)
  kNoise,        // within the noise
  kUnknown,      // a variance is unknown (samples without object sizes)
};

// One value on both sides and its change.
struct DiffValue {
  int64_t base = 0;
  int64_t next = 0;
  double base_variance = 0;
  double next_variance = 0;

  int64_t change() const { return next - base; }
  // 1.96·sqrt(Var_base + Var_new): the half-width of the change's 95% interval (NaN if unknown).
  double noise() const;
  Significance significance() const;
};

// A function (ReportRow identity: name and file, or mapping and address) and its values.
struct DiffFunction {
  ReportRow row;  // names only; its values are those of NEW (or BASE when absent from NEW)
  DiffValue flat;
  DiffValue cum;
};

// A full call stack, leaf first, by function (inlined frames expanded).
struct DiffStack {
  std::vector<ReportRow> frames;
  DiffValue value;
};

struct Diff {
  ProfileHeader base_header;  // of the profiles compared
  ProfileHeader next_header;
  profile::ValueType sample_type;
  bool sampled = false;  // either side is a sampling estimate; false when both are exact
  DiffValue total;
  size_t functions = 0;               // functions present on either side
  std::vector<DiffFunction> by_cum;   // nonzero cum changes, by decreasing |change|
  std::vector<DiffFunction> by_flat;  // nonzero flat changes, by decreasing |change|
  std::vector<DiffStack> stacks;      // nonzero stack changes, by decreasing |change|
};

// Throws IncompatibleProfilesError when the profiles have different sample or period types.
void CheckCompatible(const profile::Profile& base, const profile::Profile& next);

// Throws IncompatibleProfilesError or UnknownSampleIndexError. The rankings by function leave out
// the rows that are context on both sides (ReportRow::context).
Diff ComputeDiff(const profile::Profile& base, const profile::Profile& next,
                 const std::string& sample_index, const ViewOptions& view_options = {});

// NEW - BASE as one profile, as `pprof -diff_base=BASE NEW` builds it: NEW's samples as they are,
// then BASE's with every value negated and the string label pprof::base=true (pprof then shows
// percentages relative to BASE's total). Mappings, locations and functions are merged when equal.
// Throws IncompatibleProfilesError.
profile::Profile MakeDiffProfile(const profile::Profile& base, const profile::Profile& next);

}  // namespace heaprec::analysis
