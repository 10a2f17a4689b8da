// The profiles a reading command is given, as one: `heaprec report`, `flame`, `diff` (each side),
// `summary` and `ui` take several files or directories and show them merged (profile/merge.h,
// docs/design/merge.md). One call does it all:
//
//   ProfileInputs in = LoadProfileInputs(args, {.command = "summary"}, symbols);
//
// A directory stands for every profile in it (CollectProfileFiles: other files are skipped
// silently), and of the profiles of one process (one pid) only its last: the final profile, else
// the latest dump that was not taken at a peak; a series of dumps or a peak profile beside the
// final one would count the same memory twice. A file named explicitly is always read, and one that
// is not a profile is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/read_for_display.h"
#include "cli/symbolization.h"
#include "profile/profile.h"

namespace heaprec::cli {

// One profile that went into the merge.
struct ProfileInput {
  std::string path{};
  std::optional<int64_t> pid{};  // the comment pid=N, when the profile has it
  std::string program{};         // the base name of its first mapping (the executable), or ""
  profile::Profile profile{};    // as read and symbolized
};

struct ProfileInputs {
  profile::Profile merged;           // all of them as one; the profile itself for one input
  std::vector<ProfileInput> inputs;  // in the order of the arguments, directories sorted by name
  std::string source;                // for a header: the one file, or "N profiles (ARGS)"
};

// Reads, checks (as ReadProfilesForDisplay does, and that they merge) and symbolizes the profiles
// `args` name, then merges them. Throws std::runtime_error for a missing path or a directory
// without profiles, and what ReadProfilesForDisplay and profile::MergeProfiles throw.
ProfileInputs LoadProfileInputs(const std::vector<std::string>& args, DisplayReading reading,
                                const SymbolSearchArgs& symbols = {});

// The same for several sets of profiles, each merged into one: the sides of `heaprec diff`. Every
// file of every side is read and checked before any is symbolized (read_for_display.h's order):
// each side must merge, every profile must be comparable with the first (reading.compared), and the
// last side has the sample index (reading.sample_index). One symbolizer serves all.
std::vector<ProfileInputs> LoadProfileInputSides(const std::vector<std::vector<std::string>>& sides,
                                                 DisplayReading reading,
                                                 const SymbolSearchArgs& symbols = {});

// How an input is named in a per-process breakdown: "pid 1234 (server)", else its file's name.
std::string InputLabel(const ProfileInput& input);

}  // namespace heaprec::cli
