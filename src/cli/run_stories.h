// The run story (analysis/run_story.h) of the processes a set of profiles comes from, as `heaprec
// summary` and the end of `heaprec run` print it: the profiles grouped by process (the pid in their
// comments), each process's story from its final profile (the last one written when it has none:
// a process killed by SIGKILL leaves its peak profile) and its peak profile.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <vector>

#include "profile/profile.h"

namespace heaprec::cli {

struct ProcessProfiles {
  std::optional<int64_t> pid;              // none: a profile without one, a process of its own
  const profile::Profile* last = nullptr;  // its final profile, else the last one listed
  const profile::Profile* peak = nullptr;  // its (last) peak profile, unless that is `last`
};

// `profiles` in the order written (a process's later profiles after its earlier ones), grouped
// in the order each process first appears. Points into `profiles`.
std::vector<ProcessProfiles> GroupByProcess(const std::vector<profile::Profile>& profiles);

// Whether the user's locale (LC_ALL, else LC_CTYPE, else LANG) is UTF-8: the summary's
// sparkline and signs are then Unicode, else ASCII.
bool LocaleIsUtf8();

// The story of each process, the largest peak first; beyond `processes` of them, one line for
// the rest. `top` sites per ranking.
void PrintStories(const std::vector<ProcessProfiles>& processes, size_t max_processes, size_t top,
                  std::ostream& out);

}  // namespace heaprec::cli
