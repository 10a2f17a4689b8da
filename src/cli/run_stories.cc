#include "cli/run_stories.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "analysis/profile_view.h"
#include "analysis/run_story.h"
#include "render/format.h"
#include "render/summary.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {

std::vector<ProcessProfiles> GroupByProcess(const std::vector<profile::Profile>& profiles) {
  std::vector<ProcessProfiles> processes;
  std::map<int64_t, size_t> by_pid;
  for (const profile::Profile& p : profiles) {
    const std::optional<int64_t> pid = analysis::ProfilePid(p);
    ProcessProfiles* process = nullptr;
    if (pid) {
      auto [at, added] = by_pid.emplace(*pid, processes.size());
      if (added) processes.push_back({.pid = pid});
      process = &processes[at->second];
    } else {
      processes.push_back({});
      process = &processes.back();
    }
    if (analysis::IsPeakProfile(p)) process->peak = &p;
    // A final profile stays the one told; the others follow one another.
    if (process->last == nullptr || !analysis::IsFinalProfile(*process->last)) process->last = &p;
  }
  for (ProcessProfiles& process : processes) {
    if (process.peak == process.last) process.peak = nullptr;
  }
  return processes;
}

bool LocaleIsUtf8() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    std::string lower(value);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
  }
  return false;
}

void PrintStories(const std::vector<ProcessProfiles>& processes, size_t max_processes, size_t top,
                  std::ostream& out) {
  std::vector<analysis::RunStory> stories;
  for (const ProcessProfiles& process : processes) {
    if (process.last != nullptr) {
      stories.push_back(
          analysis::ComputeRunStory(*process.last, process.peak, top == 0 ? SIZE_MAX : top));
    }
  }
  std::stable_sort(
      stories.begin(), stories.end(),
      [](const analysis::RunStory& a, const analysis::RunStory& b) { return a.peak > b.peak; });
  render::SummaryOptions options;
  options.unicode = LocaleIsUtf8();
  for (size_t i = 0; i < stories.size() && i < max_processes; ++i) {
    if (i > 0) out << "\n";
    render::PrintRunStory(stories[i], options, out);
  }
  if (stories.size() > max_processes) {
    int64_t rest = 0;
    for (size_t i = max_processes; i < stories.size(); ++i) rest += stories[i].peak;
    out << "\nand " << stories.size() - max_processes << " more processes, their peaks summing to "
        << render::FormatValue(rest, schema::kBytesUnit) << "\n";
  }
}

}  // namespace heaprec::cli
