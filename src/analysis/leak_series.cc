// The analysis behind `heaprec leaks`: series, sites, regression. The statistics are described in
// leak_series.h.
#include "analysis/leak_series.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "analysis/object_age.h"
#include "profile/sampling_error.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {

using profile::Profile;
using profile::Sample;

LinearFit FitLine(const std::vector<double>& t, const std::vector<double>& y,
                  const std::vector<double>& variances) {
  LinearFit fit;
  size_t n = std::min(t.size(), y.size());
  fit.n = n;
  if (n == 0) return fit;
  double t_mean = 0, y_mean = 0;
  for (size_t i = 0; i < n; ++i) {
    t_mean += t[i];
    y_mean += y[i];
  }
  t_mean /= static_cast<double>(n);
  y_mean /= static_cast<double>(n);
  double sxx = 0, sxy = 0, sst = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (t[i] - t_mean) * (t[i] - t_mean);
    sxy += (t[i] - t_mean) * (y[i] - y_mean);
    sst += (y[i] - y_mean) * (y[i] - y_mean);
  }
  fit.intercept = y_mean;
  if (n < 2 || sxx <= 0) return fit;  // one point in time: no slope
  fit.slope = sxy / sxx;
  fit.intercept = y_mean - fit.slope * t_mean;
  double ssr = 0;
  for (size_t i = 0; i < n; ++i) {
    double r = y[i] - fit.intercept - fit.slope * t[i];
    ssr += r * r;
  }
  // Rounding can leave a tiny SSR (or one above SST) for perfect or flat fits.
  fit.r2 = sst > 0 ? std::clamp(1.0 - ssr / sst, 0.0, 1.0) : 0.0;
  if (n > 2) fit.var_fit = ssr / static_cast<double>(n - 2) / sxx;
  if (variances.size() >= n) {
    // Σ_i Σ_j |c_i||c_j| min(v_i, v_j) in O(n log n): visiting the points by increasing v, the
    // pairs whose smaller variance is v_k contribute v_k·(|c_k|² + 2|c_k|·Σ_{later} |c_j|).
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return variances[a] < variances[b]; });
    double later = 0;
    for (size_t i = 0; i < n; ++i) later += std::abs(t[i] - t_mean) / sxx;
    for (size_t k : order) {
      double c = std::abs(t[k] - t_mean) / sxx;
      later -= c;
      double v = std::max(variances[k], 0.0);
      fit.var_sampling += v * (c * c + 2 * c * std::max(later, 0.0));
    }
  }
  fit.stderr_slope = std::sqrt(fit.var_fit + fit.var_sampling);
  if (fit.stderr_slope > 0) {
    fit.t = std::clamp(fit.slope / fit.stderr_slope, -kMaxT, kMaxT);
  } else {
    fit.t = fit.slope > 0 ? kMaxT : (fit.slope < 0 ? -kMaxT : 0.0);
  }
  return fit;
}

namespace {

struct SiteAccumulator {
  LeakSite site;
  std::vector<double> bytes;      // per profile
  std::vector<double> variances;  // per profile
  bool has_age = false;
  int64_t age_time_nanos = 0;  // time of the profile the age comes from
  int64_t age_ns = 0;
};

LeakSeries AnalyzeSeries(std::vector<LeakInput*> inputs, std::optional<int64_t> pid,
                         const LeakOptions& options) {
  std::stable_sort(inputs.begin(), inputs.end(), [](const LeakInput* a, const LeakInput* b) {
    if (a->profile.time_nanos != b->profile.time_nanos) {
      return a->profile.time_nanos < b->profile.time_nanos;
    }
    return a->file < b->file;
  });
  LeakSeries series;
  series.pid = pid;
  const size_t n = inputs.size();
  for (const LeakInput* in : inputs) {
    series.files.push_back(in->file);
    series.time_nanos.push_back(in->profile.time_nanos);
    series.period = std::max(series.period, in->profile.period);
    series.per_object = series.per_object || profile::SamplingModel(in->profile).per_object;
  }
  int64_t t0 = n == 0 ? 0 : series.time_nanos.front();
  std::vector<double> seconds(n);
  for (size_t i = 0; i < n; ++i) seconds[i] = static_cast<double>(series.time_nanos[i] - t0) / 1e9;
  if (n > 0) series.duration_seconds = seconds.back();

  std::map<std::string, SiteAccumulator> sites;  // by key: output order does not depend on hashing
  for (size_t i = 0; i < n; ++i) {
    const Profile& p = inputs[i]->profile;
    size_t index = SIZE_MAX;
    for (size_t k = 0; k < p.sample_types.size(); ++k) {
      if (p.sample_types[k].type == schema::kInuseSpace) index = k;
    }
    if (index == SIZE_MAX) {
      throw std::runtime_error(inputs[i]->file + ": no " + schema::kInuseSpace + " values");
    }
    const ProfileView view(p);
    for (const Sample& s : p.samples) {
      if (index >= s.values.size()) continue;
      std::vector<const FrameId*> stack;
      for (uint64_t location_id : s.location_ids) {
        for (const LocationFrame& frame : view.Frames(location_id)) {
          stack.push_back(&view.functions()[frame.function]);
          if (options.by == LeakSiteKind::kFunction) break;
        }
        if (options.by == LeakSiteKind::kFunction && !stack.empty()) break;
      }
      if (stack.empty()) continue;
      std::string key;
      for (const FrameId* f : stack) key += f->key + '\n';
      auto [it, inserted] = sites.try_emplace(key);
      SiteAccumulator& acc = it->second;
      if (inserted) {
        acc.site.name = stack.front()->DisplayName();
        acc.site.file = stack.front()->file;
        acc.site.line = stack.front()->line;
        acc.site.leaf_label = stack.front()->Label();
        for (const FrameId* f : stack) acc.site.stack.push_back(f->DisplayName());
        acc.bytes.assign(n, 0.0);
        acc.variances.assign(n, 0.0);
      }
      int64_t value = s.values[index];
      acc.bytes[i] += static_cast<double>(value);
      acc.variances[i] += view.KnownVariance(s, index);
      int64_t age = SampleAgeNanos(p, s);
      if (value > 0 && age >= 0) {
        // Profiles are visited in time order: a later profile replaces the age's source.
        if (!acc.has_age || acc.age_time_nanos != p.time_nanos) {
          acc.has_age = true;
          acc.age_time_nanos = p.time_nanos;
          acc.age_ns = age;
        } else {
          acc.age_ns = std::max(acc.age_ns, age);
        }
      }
    }
  }

  for (auto& [key, acc] : sites) {
    LeakSite& site = acc.site;
    for (size_t i = 0; i < n; ++i) {
      LeakPoint point;
      point.seconds = seconds[i];
      point.bytes = std::llround(acc.bytes[i]);
      point.variance = acc.variances[i];
      profile::Interval ci = profile::Confidence95(acc.bytes[i], acc.variances[i]);
      point.low = ci.low;
      point.high = ci.high;
      site.points.push_back(point);
      site.max_bytes = std::max(site.max_bytes, point.bytes);
    }
    if (site.max_bytes <= 0) continue;  // never held anything live: not a candidate
    site.first_bytes = site.points.front().bytes;
    site.last_bytes = site.points.back().bytes;
    site.fit = FitLine(seconds, acc.bytes, acc.variances);
    site.suspect = n >= kMinProfilesForSuspect && site.fit.slope > 0 && site.growth() > 0 &&
                   site.fit.t >= options.min_t && site.fit.r2 >= options.min_r2;
    site.score = site.fit.slope * site.fit.r2;
    if (acc.has_age) site.age_seconds = static_cast<double>(acc.age_ns) / 1e9;
    series.sites.push_back(std::move(site));
  }
  std::stable_sort(series.sites.begin(), series.sites.end(),
                   [](const LeakSite& a, const LeakSite& b) {
                     if (a.suspect != b.suspect) return a.suspect;
                     if (a.score != b.score) return a.score > b.score;
                     return a.max_bytes > b.max_bytes;
                   });
  series.suspects = static_cast<size_t>(std::count_if(series.sites.begin(), series.sites.end(),
                                                      [](const LeakSite& s) { return s.suspect; }));
  return series;
}

}  // namespace

std::string LeakSite::Label() const {
  if (stack.size() > 1) {
    std::string label;
    for (const std::string& frame : stack) label += (label.empty() ? "" : " < ") + frame;
    return label;
  }
  return leaf_label;
}

std::vector<LeakSeries> AnalyzeLeaks(std::vector<LeakInput> inputs, const LeakOptions& options) {
  std::map<std::optional<int64_t>, std::vector<LeakInput*>> groups;
  std::map<std::optional<int64_t>, size_t> peaks;
  for (LeakInput& in : inputs) {
    std::optional<int64_t> key = options.single_series ? std::nullopt : ProfilePid(in.profile);
    if (IsPeakProfile(in.profile)) {
      ++peaks[key];  // chosen for being a maximum: it would bias the trend
      continue;
    }
    groups[key].push_back(&in);
  }
  std::vector<LeakSeries> result;
  for (auto& [pid, group] : groups) {
    result.push_back(AnalyzeSeries(group, pid, options));
    result.back().peak_profiles_left_out = peaks[pid];
  }
  return result;
}

}  // namespace heaprec::analysis
