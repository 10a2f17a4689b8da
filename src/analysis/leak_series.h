// The analysis behind `heaprec leaks` (render/leaks.h prints it): finds the allocation sites whose
// live bytes keep growing across a series of profiles of one process (the numbered files of
// `heaprec run --dump-interval`, then the exit profile).
//
// Per site, over the n profiles of a series (times t_i in seconds from the first profile, live
// bytes y_i = the site's inuse_space, v_i = its sampling variance from profile/sampling_error.h
// under the profile's own sampling model: per byte for native profiles, per object for Ruby's):
//
//   slope b     ordinary least squares: b = Σ(t_i - t̄)(y_i - ȳ) / Sxx, Sxx = Σ(t_i - t̄)².
//   R²          1 - SSR/SST of that line (0 for a constant series).
//   stderr(b)   sqrt(Var_fit + Var_sampling), where
//                 Var_fit      = SSR / (n - 2) / Sxx, the usual OLS variance: how far the points
//                                scatter around the line (the program's own ups and downs, and
//                                sampling noise that is independent from one profile to the next);
//                 Var_sampling = Σ_i Σ_j |c_i| |c_j| min(v_i, v_j), c_i = (t_i - t̄) / Sxx, an upper
//                                bound of the variance the sampling errors give b = Σ c_i y_i.
//                                Those errors are correlated across profiles (a sampled object
//                                keeps its weight in every profile until it is freed), so a few
//                                lucky samples early on can tilt the whole line without any scatter
//                                showing it. Objects are sampled independently, so Cov(e_i, e_j) is
//                                the variance of the objects live in both profiles: between 0 and
//                                min(v_i, v_j), which gives the bound. 0 in exact mode.
//               The sum counts part of the sampling noise twice: the test errs on the side of not
//               accusing a site.
//   t           b / stderr(b): how many standard errors the slope is above zero.
//   suspect     n >= kMinProfilesForSuspect, b > 0, last > first, t >= min_t (default 3; one-sided
//               p ≈ 0.001 under a normal approximation, strict because every site of the program is
//               tested) and R² >= min_r2 (default 0.5: the growth is steady, not one jump or
//               noise).
//   plateau     the site rose, then stopped: a cache that filled up (or a pool that reached its
//               size), not a leak. With n >= kMinProfilesForPlateau, the tail is the last
//               max(3, ⌈n/3⌉) points and b_tail, stderr(b_tail) the fit above over the tail alone
//               (its sampling bound included). A plateau is a site whose whole series would make a
//               suspect by t (t >= min_t, last > first) and whose tail
//                 - does not rise: b_tail < kPlateauT · stderr(b_tail) or b_tail <= 0 (the
//                   tail's slope is within its error of 0, or below: a cache that evicts), and
//                 - has slowed down: b - b_tail > kPlateauSlowdownT · stderr(b_tail), 3 as for
//                   a suspect's t (the tail's slope is not the whole series' own slope seen
//                   through noise). Measured on 200 steady leaks in noise (12 profiles, 1 unit a
//                   second ± 2: tests/analysis, PlateauTest): 2.5% called plateaus, 5.5% with 2
//                   (the tail's scatter has few degrees of freedom, so its error is sometimes small
//                   by luck); flat noise: none.
//               The second condition keeps a steady leak whose tail is too noisy to tell from flat
//               a suspect: the rule only moves a site out when the data show the growth stopped.
//               A leak that starts late has a steep tail (not flat); one that slows down but
//               keeps growing has a tail slope above its error. A plateau is never a suspect.
//   score       b · R² (bytes/s): fast and steady growth first. Suspects rank before the other
//               sites, each group by decreasing score.
//   age         for the last profile in which the site holds sampled objects of known age
//               (analysis/object_age.h: the `age_ns` label, or an older file's `oldest_alloc_ns`):
//               the largest age of the site's samples there; unknown when the profiles lack it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/profile_view.h"
#include "profile/profile.h"

namespace heaprec::analysis {

inline constexpr size_t kMinProfilesForSuspect = 4;
// The plateau test (see above) needs a tail of 3 points after a rise of at least 3.
inline constexpr size_t kMinProfilesForPlateau = 6;
inline constexpr double kPlateauT = 2.0;          // "within its error": two standard errors
inline constexpr double kPlateauSlowdownT = 3.0;  // "has slowed down": three

// The least-squares line through (t_i, y_i) with the statistics above. `variances` may be empty
// (no sampling error).
struct LinearFit {
  size_t n = 0;
  double slope = 0;      // y units per t unit
  double intercept = 0;  // y at t = 0
  double r2 = 0;
  double var_fit = 0;       // residual-based variance of the slope (0 when n <= 2)
  double var_sampling = 0;  // bound of the sampling errors' contribution
  double stderr_slope = 0;  // sqrt(var_fit + var_sampling)
  double t = 0;             // slope / stderr_slope; kMaxT when stderr is 0 and slope > 0
};
inline constexpr double kMaxT = 1e6;

LinearFit FitLine(const std::vector<double>& t, const std::vector<double>& y,
                  const std::vector<double>& variances);

enum class LeakSiteKind { kFunction, kStack };

struct LeakOptions {
  LeakSiteKind by = LeakSiteKind::kFunction;
  bool single_series = false;  // all profiles in one series, whatever their pid
  ViewOptions view;            // how frames are named and where a sample's site is
  double min_t = 3.0;
  double min_r2 = 0.5;
};

// One profile of a series, as read from disk.
struct LeakInput {
  std::string file;
  profile::Profile profile;
};

struct LeakPoint {
  double seconds = 0;  // since the series' first profile
  int64_t bytes = 0;   // the site's inuse_space
  double variance = 0;
  double low = 0;  // 95% interval
  double high = 0;
};

struct LeakSite {
  std::string name;                // the leaf function's FrameId::DisplayName()
  std::string file;                // its source file, "" if unknown
  int64_t line = 0;                // the line that held the most in the series, 0 if unknown
  std::vector<std::string> stack;  // --by stack: function names, leaf first; else {name}
  std::vector<LeakPoint> points;   // one per profile of the series
  LinearFit fit;
  int64_t first_bytes = 0;
  int64_t last_bytes = 0;
  int64_t max_bytes = 0;
  std::optional<double> age_seconds;  // see above
  // Its inuse_space in the series' final profile (LeakSeries::final_file), if there is one.
  std::optional<int64_t> final_bytes;
  bool suspect = false;
  bool plateau = false;  // rose, then stayed flat (see above); never a suspect
  LinearFit tail_fit;    // the fit over the tail, when the plateau test ran (n >= 6)
  double score = 0;

  int64_t growth() const { return last_bytes - first_bytes; }
  std::string Label() const;  // "name file:line" or the stack "leaf < caller < ..."
};

struct LeakSeries {
  std::optional<int64_t> pid;  // none with single_series, or when the profiles carry no pid
  std::vector<std::string> files;
  std::vector<int64_t> time_nanos;
  double duration_seconds = 0;
  int64_t period = 0;           // sampling interval of the profiles (the largest, if they differ)
  bool per_object = false;      // sampled per object (Ruby: 1 in `period` objects), not per byte
  std::vector<LeakSite> sites;  // ranked: suspects first, then by score
  size_t suspects = 0;
  size_t plateaus = 0;
  size_t peak_profiles_left_out = 0;  // profiles with reason=peak (see AnalyzeLeaks)
  std::string final_file;             // the final profile set aside (see AnalyzeLeaks); "" if none
};

// Groups the profiles by pid (unless options.single_series), orders each series by time_nanos
// (then file name) and ranks its sites. Profiles written with reason=peak (NAME.peak.pb.gz) are
// left out: taken when the heap was largest, they would bias every trend upwards. A process's
// final profile (reason exit, _exit, crash or terminated: IsFinalProfile) is not a point of the
// series either: a program that frees what it holds before it exits (destructors, RAII) would
// drop every site to 0 there and hide every trend. It is set aside, and each site's bytes in it are
// LeakSite::final_bytes: what was still live at the end. (A series of only a final profile keeps
// it as its one point.) Series are returned by pid. Throws std::runtime_error if a profile has no
// inuse_space values.
std::vector<LeakSeries> AnalyzeLeaks(std::vector<LeakInput> inputs, const LeakOptions& options);

}  // namespace heaprec::analysis
