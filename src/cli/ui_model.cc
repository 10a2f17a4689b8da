#include "cli/ui_model.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/leak_series.h"
#include "analysis/profile_header.h"
#include "analysis/profile_view.h"
#include "profile/merge.h"
#include "render/leaks.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {
namespace {

std::string Reason(const profile::Profile& p) {
  return analysis::CommentField(p, schema::kReasonField).value_or("");
}

// The menu's words for a profile: "pid 12, interval at 12:00:01 (p.12.0003.pb.gz)".
std::string Label(const profile::Profile& p, const std::string& path) {
  std::string label;
  if (const std::optional<int64_t> pid = analysis::ProfilePid(p)) {
    label = "pid " + std::to_string(*pid) + ", ";
  }
  const std::string reason = Reason(p);
  label += reason.empty() ? "profile" : reason;
  return label + " (" + std::filesystem::path(path).filename().string() + ")";
}

// Of one process's profiles (indices into `profiles`), the one that tells how it ended: its final
// profile, else its latest that was not taken at a peak (as profile_inputs.h chooses).
size_t LastOf(const std::vector<size_t>& mine, const std::vector<profile::Profile>& profiles) {
  size_t best = mine.front();
  auto rank = [&](size_t i) {
    const std::string reason = Reason(profiles[i]);
    return std::make_tuple(schema::IsFinalReason(reason)   ? 2
                           : reason == schema::kReasonPeak ? 0
                                                           : 1,
                           profiles[i].time_nanos);
  };
  for (size_t i : mine) {
    if (rank(i) > rank(best)) best = i;
  }
  return best;
}

std::string LeaksJson(const std::vector<profile::Profile>& profiles,
                      const std::vector<std::string>& paths) {
  std::vector<analysis::LeakInput> inputs;
  for (size_t i = 0; i < profiles.size(); ++i) inputs.push_back({paths[i], profiles[i]});
  render::LeakReportOptions options;
  options.top = 0;
  const std::vector<analysis::LeakSeries> series =
      analysis::AnalyzeLeaks(std::move(inputs), options.analysis);
  std::ostringstream json;
  render::PrintLeaksJson(series, options, json);
  return json.str();
}

}  // namespace

render::UiDocument BuildUiDocument(std::vector<profile::Profile> profiles,
                                   const std::vector<std::string>& paths,
                                   const std::string& source) {
  render::UiDocument d;
  d.source = source;
  // Menu order: by process, then by time.
  std::vector<size_t> order(profiles.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(analysis::ProfilePid(profiles[a]).value_or(-1), profiles[a].time_nanos) <
           std::make_pair(analysis::ProfilePid(profiles[b]).value_or(-1), profiles[b].time_nanos);
  });
  std::map<int64_t, std::vector<size_t>> by_pid;
  for (size_t i : order) by_pid[analysis::ProfilePid(profiles[i]).value_or(-1)].push_back(i);

  for (const auto& [pid, mine] : by_pid) {
    // The process's timeline: its latest profile that carries one has the most points.
    for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
      const analysis::ProfileHeader header = analysis::HeaderOf(profiles[*it]);
      if (header.timeline && pid >= 0) {
        d.timelines.push_back({pid, *header.timeline});
        break;
      }
    }
  }
  d.leaks_json = profiles.size() > 1 ? LeaksJson(profiles, paths) : "";

  // Several processes: first their last profiles as one (the view `heaprec report DIR` gives).
  if (by_pid.size() > 1) {
    std::vector<profile::Profile> last;
    std::vector<std::string> names;
    for (const auto& [pid, mine] : by_pid) {
      const size_t i = LastOf(mine, profiles);
      last.push_back(profiles[i]);
      names.push_back(paths[i]);
    }
    try {
      render::UiProfile merged;
      merged.path = source;
      merged.label = "all " + std::to_string(by_pid.size()) + " processes, merged";
      merged.reason = "merged";
      merged.tree = analysis::BuildFlameGraph(profile::MergeProfiles(std::move(last), names));
      d.profiles.push_back(std::move(merged));
    } catch (const std::exception&) {
      // Profiles that do not merge (other sampling intervals) are still shown one by one.
    }
  } else if (!by_pid.empty()) {
    const std::vector<size_t>& mine = by_pid.begin()->second;
    const size_t last = LastOf(mine, profiles);
    d.initial = static_cast<size_t>(std::find(order.begin(), order.end(), last) - order.begin());
  }
  for (size_t i : order) {
    render::UiProfile p;
    p.path = paths[i];
    p.label = Label(profiles[i], paths[i]);
    p.pid = analysis::ProfilePid(profiles[i]);
    p.reason = Reason(profiles[i]);
    p.time_nanos = profiles[i].time_nanos;
    p.tree = analysis::BuildFlameGraph(profiles[i]);
    d.profiles.push_back(std::move(p));
  }
  return d;
}

}  // namespace heaprec::cli
