// The analysis behind `heaprec leaks` (series, sites, regression) and its text and JSON output.
// The statistics are described in leaks.h.
#include "cli/leaks.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "cli/json_writer.h"
#include "cli/report.h"
#include "cli/text_format.h"
#include "profile/sampling_error.h"

namespace heaprec::cli {

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

std::string FormatSeconds(double seconds) {
  char buf[32];
  double a = std::abs(seconds);
  if (a < 1) {
    std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1e3);
  } else if (a < 120) {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  } else if (a < 7200) {
    std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  }
  return buf;
}

namespace {

// The value of a "NAME=VALUE" comment (comments may also hold several space-separated fields).
std::optional<std::string> CommentField(const Profile& p, const std::string& name) {
  std::string prefix = name + "=";
  for (const std::string& comment : p.comments) {
    size_t pos = 0;
    while (pos < comment.size()) {
      size_t end = comment.find(' ', pos);
      if (end == std::string::npos) end = comment.size();
      if (comment.compare(pos, prefix.size(), prefix) == 0) {
        return comment.substr(pos + prefix.size(), end - pos - prefix.size());
      }
      pos = end + 1;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> PidOf(const Profile& p) {
  std::optional<std::string> value = CommentField(p, "pid");
  if (!value || value->empty()) return std::nullopt;
  char* stop = nullptr;
  long long pid = std::strtoll(value->c_str(), &stop, 10);
  if (stop == nullptr || *stop != '\0') return std::nullopt;
  return pid;
}

// A frame as the report names it: the function (name + source file), or an address.
struct Frame {
  std::string key;
  std::string name;
  std::string file;
  int64_t line = 0;
};

// The frames of every location, innermost first (inlined frames expanded).
class FrameTable {
 public:
  explicit FrameTable(const Profile& p) {
    std::unordered_map<uint64_t, const Function*> functions;
    for (const Function& f : p.functions) functions[f.id] = &f;
    std::unordered_map<uint64_t, const Mapping*> mappings;
    for (const Mapping& m : p.mappings) mappings[m.id] = &m;
    // A function without a start line (Ruby's) is shown at the smallest line the profile has for
    // it, as the report does.
    std::unordered_map<uint64_t, int64_t> first_lines;
    for (const Location& loc : p.locations) {
      for (const Line& line : loc.lines) {
        if (line.line <= 0) continue;
        auto [it, inserted] = first_lines.try_emplace(line.function_id, line.line);
        if (!inserted) it->second = std::min(it->second, line.line);
      }
    }
    for (const Location& loc : p.locations) {
      std::vector<Frame>& frames = by_location_[loc.id];
      for (const Line& line : loc.lines) {
        auto it = functions.find(line.function_id);
        if (it == functions.end()) continue;
        const Function& f = *it->second;
        Frame frame;
        frame.name = f.name.empty() ? f.system_name : f.name;
        frame.file = f.filename;
        frame.line = f.start_line;
        if (frame.line <= 0) {
          auto first = first_lines.find(f.id);
          frame.line = first == first_lines.end() ? 0 : first->second;
        }
        frame.key = "f:" + frame.name + '\0' + f.filename;
        frames.push_back(std::move(frame));
      }
      if (frames.empty()) {
        auto mit = mappings.find(loc.mapping_id);
        std::string mapping = mit == mappings.end() ? "" : BaseName(mit->second->filename);
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%" PRIx64, loc.address);
        Frame frame;
        frame.name = mapping.empty() ? hex : std::string(hex) + " (" + mapping + ")";
        frame.key = "a:" + mapping + '\0' + hex;
        frames.push_back(std::move(frame));
      }
    }
  }

  const std::vector<Frame>* Frames(uint64_t location_id) const {
    auto it = by_location_.find(location_id);
    return it == by_location_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<uint64_t, std::vector<Frame>> by_location_;
};

int64_t NumericLabel(const Sample& s, const std::string& key) {
  for (const Label& label : s.labels) {
    if (label.key == key && label.str.empty()) return label.num;
  }
  return -1;
}

struct SiteAccumulator {
  LeakSite site;
  std::vector<double> bytes;      // per profile
  std::vector<double> variances;  // per profile
  int64_t oldest_time_nanos = 0;  // time of the profile the age comes from (0: none)
  int64_t oldest_alloc_ns = 0;
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
    series.per_object = series.per_object || SamplingModel(in->profile).per_object;
  }
  int64_t t0 = n == 0 ? 0 : series.time_nanos.front();
  std::vector<double> seconds(n);
  for (size_t i = 0; i < n; ++i) seconds[i] = static_cast<double>(series.time_nanos[i] - t0) / 1e9;
  if (n > 0) series.duration_seconds = seconds.back();

  std::map<std::string, SiteAccumulator> sites;  // by key: output order does not depend on hashing
  for (size_t i = 0; i < n; ++i) {
    const Profile& p = inputs[i]->profile;
    int index = -1;
    for (size_t k = 0; k < p.sample_types.size(); ++k) {
      if (p.sample_types[k].type == "inuse_space") index = static_cast<int>(k);
    }
    if (index < 0) throw std::runtime_error(inputs[i]->file + ": no inuse_space values");
    FrameTable frames(p);
    const SamplingModel model(p);
    for (const Sample& s : p.samples) {
      if (static_cast<size_t>(index) >= s.values.size()) continue;
      std::vector<const Frame*> stack;
      for (uint64_t location_id : s.location_ids) {
        const std::vector<Frame>* fs = frames.Frames(location_id);
        if (fs == nullptr) continue;
        for (const Frame& f : *fs) {
          stack.push_back(&f);
          if (options.by == LeakSiteKind::kFunction) break;
        }
        if (options.by == LeakSiteKind::kFunction) break;
      }
      if (stack.empty()) continue;
      std::string key;
      for (const Frame* f : stack) key += f->key + '\n';
      auto [it, inserted] = sites.try_emplace(key);
      SiteAccumulator& acc = it->second;
      if (inserted) {
        acc.site.name = stack.front()->name;
        acc.site.file = stack.front()->file;
        acc.site.line = stack.front()->line;
        for (const Frame* f : stack) acc.site.stack.push_back(f->name);
        acc.bytes.assign(n, 0.0);
        acc.variances.assign(n, 0.0);
      }
      int64_t value = s.values[static_cast<size_t>(index)];
      acc.bytes[i] += static_cast<double>(value);
      acc.variances[i] += ValueVariance("inuse_space", value, SampleObjectSize(s), model);
      int64_t oldest = NumericLabel(s, "oldest_alloc_ns");
      if (value > 0 && oldest > 0) {
        // Profiles are visited in time order: a later profile replaces the age's source.
        if (acc.oldest_time_nanos != p.time_nanos) {
          acc.oldest_time_nanos = p.time_nanos;
          acc.oldest_alloc_ns = oldest;
        } else {
          acc.oldest_alloc_ns = std::min(acc.oldest_alloc_ns, oldest);
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
      Interval ci = Confidence95(acc.bytes[i], acc.variances[i]);
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
    if (acc.oldest_time_nanos != 0) {
      site.age_seconds =
          std::max(0.0, static_cast<double>(acc.oldest_time_nanos - acc.oldest_alloc_ns) / 1e9);
    }
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

std::string LeftPad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string RightPad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Bytes(double v) { return FormatValue(std::llround(v), "bytes"); }

std::string SignedBytes(int64_t v) { return (v > 0 ? "+" : "") + FormatValue(v, "bytes"); }

std::string TValue(double t) {
  if (t >= kMaxT) return "inf";
  if (t <= -kMaxT) return "-inf";
  return Fixed(t, 1);
}

size_t Shown(const LeakSeries& s, size_t top) {
  return top == 0 ? s.sites.size() : std::min(top, s.sites.size());
}

std::string SeriesTitle(const LeakSeries& s) {
  std::string title = s.pid ? "pid " + std::to_string(*s.pid) : std::string("all profiles");
  title += ": " + std::to_string(s.files.size()) + " profile" + (s.files.size() == 1 ? "" : "s") +
           " over " + FormatSeconds(s.duration_seconds) + ", ";
  title += DescribeSampling(s);
  title += "; " + std::to_string(s.suspects) + " suspect" + (s.suspects == 1 ? "" : "s") +
           " among " + std::to_string(s.sites.size()) + " site" + (s.sites.size() == 1 ? "" : "s");
  if (s.peak_profiles_left_out > 0) {
    title += " (" + std::to_string(s.peak_profiles_left_out) + " peak profile" +
             (s.peak_profiles_left_out == 1 ? "" : "s") + " left out)";
  }
  return title;
}

// Pretty-printed JSON like JsonWriter's, plus booleans and numbers at a chosen precision.
class Json {
 public:
  explicit Json(std::ostream& out) : out_(out) {}
  Json& Open(char bracket) {
    Value();
    out_ << bracket;
    empty_.push_back(true);
    return *this;
  }
  Json& Close(char bracket) {
    bool was_empty = empty_.back();
    empty_.pop_back();
    if (!was_empty) out_ << "\n" << std::string(2 * empty_.size(), ' ');
    out_ << bracket;
    return *this;
  }
  Json& Key(std::string_view key) {
    Value();
    out_ << JsonWriter::Quote(key) << ": ";
    after_key_ = true;
    return *this;
  }
  Json& Str(std::string_view v) { return Raw(JsonWriter::Quote(v)); }
  Json& Int(int64_t v) { return Raw(std::to_string(v)); }
  Json& Num(double v, int decimals) { return Raw(std::isfinite(v) ? Fixed(v, decimals) : "null"); }
  Json& Bool(bool v) { return Raw(v ? "true" : "false"); }
  Json& Null() { return Raw("null"); }
  template <typename Write>
  Json& Inline(Write write) {
    Value();
    write(out_);
    return *this;
  }

 private:
  Json& Raw(const std::string& text) {
    Value();
    out_ << text;
    return *this;
  }
  void Value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (empty_.empty()) return;
    if (!empty_.back()) out_ << ",";
    empty_.back() = false;
    out_ << "\n" << std::string(2 * empty_.size(), ' ');
  }

  std::ostream& out_;
  std::vector<bool> empty_;
  bool after_key_ = false;
};

}  // namespace

std::string DescribeSampling(const LeakSeries& s) {
  if (s.period <= 1) return "exact";
  if (s.per_object) return "sampled " + FormatObjectSampling(s.period);
  return "sampled every " + FormatValue(s.period, "bytes");
}

std::string LeakSite::Label() const {
  if (stack.size() > 1) {
    std::string label;
    for (const std::string& frame : stack) label += (label.empty() ? "" : " < ") + frame;
    return label;
  }
  if (file.empty()) return name;
  std::string label = name + " " + BaseName(file);
  if (line > 0) label += ":" + std::to_string(line);
  return label;
}

std::vector<LeakSeries> AnalyzeLeaks(std::vector<LeakInput> inputs, const LeakOptions& options) {
  std::map<std::optional<int64_t>, std::vector<LeakInput*>> groups;
  std::map<std::optional<int64_t>, size_t> peaks;
  for (LeakInput& in : inputs) {
    std::optional<int64_t> key = options.single_series ? std::nullopt : PidOf(in.profile);
    if (CommentField(in.profile, "reason") == "peak") {
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

void PrintLeaksText(const std::vector<LeakSeries>& all, const LeakReportOptions& options,
                    std::ostream& out) {
  if (all.empty()) out << "No profiles.\n";
  bool first = true;
  for (const LeakSeries& s : all) {
    if (!first) out << "\n";
    first = false;
    out << SeriesTitle(s) << "\n";
    if (s.files.size() < kMinProfilesForSuspect) {
      out << "  (fewer than " << kMinProfilesForSuspect
          << " profiles: no site can be called a suspect; use heaprec run --dump-interval)\n";
    }
    size_t shown = Shown(s, options.top);
    if (shown == 0) continue;
    out << "   #  suspect       slope/s    R2        t       growth         last   oldest  "
           "site\n";
    for (size_t i = 0; i < shown; ++i) {
      const LeakSite& site = s.sites[i];
      out << LeftPad(std::to_string(i + 1), 4) << "  " << RightPad(site.suspect ? "yes" : "-", 7)
          << LeftPad(Bytes(site.fit.slope) + "/s", 14) << LeftPad(Fixed(site.fit.r2, 2), 6)
          << LeftPad(TValue(site.fit.t), 9) << LeftPad(SignedBytes(site.growth()), 13)
          << LeftPad(FormatValue(site.last_bytes, "bytes"), 13)
          << LeftPad(site.age_seconds ? FormatSeconds(*site.age_seconds) : "-", 9) << "  "
          << site.Label() << "\n";
    }
  }
  out << "\nslope: least-squares growth of live bytes; t: slope / its standard error (sampling "
         "error included)\nsuspect: t >= "
      << Fixed(options.analysis.min_t, 1) << ", R2 >= " << Fixed(options.analysis.min_r2, 2)
      << ", last > first, " << kMinProfilesForSuspect
      << "+ profiles; oldest: age of the oldest live sampled object\n";
}

void PrintLeaksJson(const std::vector<LeakSeries>& all, const LeakReportOptions& options,
                    std::ostream& out) {
  Json j(out);
  j.Open('{');
  j.Key("sample_index").Str("inuse_space");
  j.Key("unit").Str("bytes");
  j.Key("by").Str(options.analysis.by == LeakSiteKind::kStack ? "stack" : "function");
  j.Key("min_t").Num(options.analysis.min_t, 2);
  j.Key("min_r2").Num(options.analysis.min_r2, 2);
  j.Key("min_profiles").Int(static_cast<int64_t>(kMinProfilesForSuspect));
  j.Key("series").Open('[');
  for (const LeakSeries& s : all) {
    j.Open('{');
    j.Key("pid");
    s.pid ? j.Int(*s.pid) : j.Null();
    j.Key("profiles").Int(static_cast<int64_t>(s.files.size()));
    j.Key("duration_seconds").Num(s.duration_seconds, 3);
    j.Key("period").Int(s.period);
    j.Key("sampled").Bool(s.period > 1);
    j.Key("period_type").Str(s.per_object ? "objects" : "space");
    j.Key("peak_profiles_left_out").Int(static_cast<int64_t>(s.peak_profiles_left_out));
    j.Key("files").Open('[');
    for (const std::string& f : s.files) j.Str(f);
    j.Close(']');
    j.Key("time_nanos").Open('[');
    for (int64_t t : s.time_nanos) j.Int(t);
    j.Close(']');
    j.Key("site_count").Int(static_cast<int64_t>(s.sites.size()));
    j.Key("suspect_count").Int(static_cast<int64_t>(s.suspects));
    j.Key("sites").Open('[');
    size_t shown = Shown(s, options.top);
    for (size_t i = 0; i < shown; ++i) {
      const LeakSite& site = s.sites[i];
      j.Open('{');
      j.Key("rank").Int(static_cast<int64_t>(i + 1));
      j.Key("site").Str(site.name);
      j.Key("file").Str(site.file);
      j.Key("line").Int(site.line);
      j.Key("stack").Open('[');
      for (const std::string& frame : site.stack) j.Str(frame);
      j.Close(']');
      j.Key("suspect").Bool(site.suspect);
      j.Key("score").Num(site.score, 1);
      j.Key("slope_bytes_per_second").Num(site.fit.slope, 1);
      j.Key("slope_stderr").Num(site.fit.stderr_slope, 1);
      j.Key("t").Num(site.fit.t, 2);
      j.Key("r2").Num(site.fit.r2, 4);
      j.Key("first_bytes").Int(site.first_bytes);
      j.Key("last_bytes").Int(site.last_bytes);
      j.Key("growth_bytes").Int(site.growth());
      j.Key("max_bytes").Int(site.max_bytes);
      j.Key("age_seconds");
      site.age_seconds ? j.Num(*site.age_seconds, 3) : j.Null();
      j.Key("points").Open('[');
      for (const LeakPoint& p : site.points) {
        j.Inline([&](std::ostream& o) {
          o << "{\"seconds\": " << Fixed(p.seconds, 3) << ", \"bytes\": " << p.bytes
            << ", \"low\": " << std::llround(p.low) << ", \"high\": " << std::llround(p.high)
            << "}";
        });
      }
      j.Close(']');
      j.Close('}');
    }
    j.Close(']');
    j.Close('}');
  }
  j.Close(']');
  j.Close('}');
  out << "\n";
}

}  // namespace heaprec::cli
