#include "symbolize/coverage.h"

#include <unordered_map>

namespace heaprec::symbolize {

Coverage MeasureCoverage(const profile::Profile& profile) {
  std::unordered_map<uint64_t, bool> has_name;
  std::unordered_map<uint64_t, bool> names_only;
  for (const profile::Mapping& m : profile.mappings) {
    names_only[m.id] = m.has_functions && !m.has_filenames && !m.has_line_numbers;
  }
  for (const profile::Function& f : profile.functions) has_name[f.id] = !f.name.empty();
  Coverage coverage;
  for (const profile::Location& location : profile.locations) {
    ++coverage.locations;
    bool named = false;
    for (const profile::Line& line : location.lines) {
      auto it = has_name.find(line.function_id);
      named |= it != has_name.end() && it->second;
    }
    if (!named) ++coverage.unnamed;
    if (named && names_only[location.mapping_id]) ++coverage.names_only;
  }
  return coverage;
}

}  // namespace heaprec::symbolize
