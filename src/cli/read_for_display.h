// How report, flame, diff and leaks read the profiles they show, in the one order they all keep:
// read every file; answer the questions the profiles must answer (are they comparable, do they
// have the sample index asked for), so that a question the profiles cannot answer is found before
// any word about symbolization (and before the time it takes); then symbolize in memory what they
// lack, with one symbolizer for all (the same binaries give the same names, so functions and sites
// match across profiles, symbolized or not when written); then say what stays unresolved.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/symbolization.h"
#include "profile/profile.h"

namespace heaprec::cli {

struct DisplayReading {
  std::string command{};  // "report": the prefix of its lines on stderr
  // The sample index the command shows ("" = the profile's default), checked against the last
  // profile (diff's NEW, whose default it means); none for a command that chooses it itself.
  std::optional<std::string> sample_index{};
  bool compared = false;  // each profile is compared with the first (diff): they must be comparable
  bool one_line = false;  // one line for all the profiles left unnamed, however many (a series)
};

// The profiles of `files`, in order, read and symbolized as above. Throws what
// profile::ReadProfileFile, analysis::CheckCompatible and analysis::SelectSampleIndex throw.
std::vector<profile::Profile> ReadProfilesForDisplay(const std::vector<std::string>& files,
                                                     const DisplayReading& reading,
                                                     const SymbolSearchArgs& symbols);

// The same on profiles already read from `files`: checks them, then symbolizes them in place.
void PrepareForDisplay(std::vector<profile::Profile>& profiles,
                       const std::vector<std::string>& files, const DisplayReading& reading,
                       const SymbolSearchArgs& symbols);

}  // namespace heaprec::cli
