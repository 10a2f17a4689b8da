#include "cli/read_for_display.h"

#include <iostream>

#include "analysis/diff.h"
#include "analysis/profile_view.h"
#include "profile/pprof_reader.h"

namespace heaprec::cli {

std::vector<profile::Profile> ReadProfilesForDisplay(const std::vector<std::string>& files,
                                                     const DisplayReading& reading,
                                                     const SymbolSearchArgs& symbols) {
  std::vector<profile::Profile> profiles;
  for (const std::string& file : files) profiles.push_back(profile::ReadProfileFile(file));
  PrepareForDisplay(profiles, files, reading, symbols);
  return profiles;
}

void PrepareForDisplay(std::vector<profile::Profile>& profiles,
                       const std::vector<std::string>& files, const DisplayReading& reading,
                       const SymbolSearchArgs& symbols) {
  if (reading.compared) {
    for (size_t i = 1; i < profiles.size(); ++i) {
      analysis::CheckCompatible(profiles.front(), profiles[i]);
    }
  }
  if (reading.sample_index && !profiles.empty()) {
    analysis::SelectSampleIndex(profiles.back(), *reading.sample_index);
  }
  InMemorySymbolization symbolization(reading.command, symbols);
  for (size_t i = 0; i < profiles.size(); ++i) symbolization.Symbolize(profiles[i], files[i]);
  symbolization.PrintRemaining(std::cerr, reading.one_line);
}

}  // namespace heaprec::cli
