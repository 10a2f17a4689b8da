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

// The plateau test of leak_series.h on a site whose whole-series fit is `fit`: fills tail_fit and
// says whether the growth stopped.
bool IsPlateau(const std::vector<double>& t, const std::vector<double>& y,
               const std::vector<double>& variances, const LinearFit& fit, double min_t,
               LinearFit& tail_fit) {
  const size_t n = std::min(t.size(), y.size());
  if (n < kMinProfilesForPlateau) return false;
  const size_t tail = std::max<size_t>(3, (n + 2) / 3);
  const size_t from = n - tail;
  auto part = [&](const std::vector<double>& v, size_t begin, size_t end) {
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(begin),
                               v.begin() + static_cast<std::ptrdiff_t>(end));
  };
  const bool has_variances = variances.size() >= n;
  tail_fit = FitLine(part(t, from, n), part(y, from, n),
                     has_variances ? part(variances, from, n) : std::vector<double>{});
  if (fit.t < min_t || fit.slope <= 0 || y[n - 1] <= y[0]) return false;  // it never rose
  // Not rising: flat within its error, or falling (a cache that evicts is no leak either).
  const bool not_rising = tail_fit.slope < kPlateauT * tail_fit.stderr_slope || tail_fit.slope <= 0;
  // Slowed down, as strictly as a suspect must rise: a leak is let off only on firm evidence.
  const bool slowed = fit.slope - tail_fit.slope > kPlateauSlowdownT * tail_fit.stderr_slope;
  return not_rising && slowed;
}

struct SiteAccumulator {
  LeakSite site;
  LineTally lines;                // of the site's leaf frame
  std::vector<double> bytes;      // per profile
  std::vector<double> variances;  // per profile
  bool has_age = false;
  int64_t age_time_nanos = 0;  // time of the profile the age comes from
  int64_t age_ns = 0;
  int64_t final_bytes = 0;  // in the series' final profile
};

// Calls visit(key, view, frames, sample, index) for every sample of the profile with its site's
// key (options.by), its frames from the site outwards (only the site's, by function) and the
// index of its inuse_space values. Throws std::runtime_error if the profile has none.
template <typename Visit>
void ForEachSiteSample(const LeakInput& input, const LeakOptions& options, Visit visit) {
  const Profile& p = input.profile;
  size_t index = SIZE_MAX;
  for (size_t k = 0; k < p.sample_types.size(); ++k) {
    if (p.sample_types[k].type == schema::kInuseSpace) index = k;
  }
  if (index == SIZE_MAX) {
    throw std::runtime_error(input.file + ": no " + schema::kInuseSpace + " values");
  }
  const ProfileView view(p, options.view);
  std::vector<LocationFrame> frames;
  std::string key;
  for (const Sample& s : p.samples) {
    if (index >= s.values.size()) continue;
    view.SiteStack(s, frames);
    if (frames.empty()) continue;
    if (options.by == LeakSiteKind::kFunction) frames.resize(1);
    key.clear();
    for (const LocationFrame& frame : frames) key += view.functions()[frame.function].key + '\n';
    visit(key, view, frames, s, index);
  }
}

LeakSeries AnalyzeSeries(std::vector<LeakInput*> inputs, const LeakInput* final_input,
                         std::optional<int64_t> pid, const LeakOptions& options) {
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
    ForEachSiteSample(
        *inputs[i], options,
        [&](const std::string& key, const ProfileView& view,
            const std::vector<LocationFrame>& frames, const Sample& s, size_t index) {
          auto [it, inserted] = sites.try_emplace(key);
          SiteAccumulator& acc = it->second;
          if (inserted) {
            const FrameId& leaf = view.functions()[frames.front().function];
            acc.site.name = leaf.DisplayName();
            acc.site.file = leaf.file;
            acc.site.line = leaf.line;
            for (const LocationFrame& frame : frames) {
              acc.site.stack.push_back(view.functions()[frame.function].DisplayName());
            }
            acc.bytes.assign(n, 0.0);
            acc.variances.assign(n, 0.0);
          }
          int64_t value = s.values[index];
          acc.lines.Add(frames.front().line, value);
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
        });
  }
  if (final_input != nullptr) {
    series.final_file = final_input->file;
    ForEachSiteSample(*final_input, options,
                      [&](const std::string& key, const ProfileView&,
                          const std::vector<LocationFrame>&, const Sample& s, size_t index) {
                        auto it = sites.find(key);
                        if (it != sites.end()) it->second.final_bytes += s.values[index];
                      });
  }

  for (auto& [key, acc] : sites) {
    LeakSite& site = acc.site;
    if (final_input != nullptr) site.final_bytes = acc.final_bytes;
    if (!options.view.lines) site.line = acc.lines.Heaviest(site.line);
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
    site.plateau =
        IsPlateau(seconds, acc.bytes, acc.variances, site.fit, options.min_t, site.tail_fit);
    site.suspect = n >= kMinProfilesForSuspect && site.fit.slope > 0 && site.growth() > 0 &&
                   site.fit.t >= options.min_t && site.fit.r2 >= options.min_r2 && !site.plateau;
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
  series.plateaus = static_cast<size_t>(std::count_if(series.sites.begin(), series.sites.end(),
                                                      [](const LeakSite& s) { return s.plateau; }));
  return series;
}

}  // namespace

std::string LeakSite::Label() const {
  if (stack.size() > 1) {
    std::string label;
    for (const std::string& frame : stack) label += (label.empty() ? "" : " < ") + frame;
    return label;
  }
  if (file.empty()) return name;
  return name + " " + BaseName(file) + (line > 0 ? ":" + std::to_string(line) : "");
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
    // The final profile (the latest, if several) is set aside when there is a series without it.
    LeakInput* final_input = nullptr;
    for (LeakInput* in : group) {
      if (IsFinalProfile(in->profile) &&
          (final_input == nullptr || in->profile.time_nanos > final_input->profile.time_nanos)) {
        final_input = in;
      }
    }
    if (final_input != nullptr && group.size() > 1) {
      std::erase(group, final_input);
    } else {
      final_input = nullptr;
    }
    result.push_back(AnalyzeSeries(group, final_input, pid, options));
    result.back().peak_profiles_left_out = peaks[pid];
  }
  return result;
}

}  // namespace heaprec::analysis
