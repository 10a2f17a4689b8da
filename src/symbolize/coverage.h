// How symbolized a profile is: the one count every command uses to decide whether a profile needs
// symbolizing and to say how far it is from done.
#pragma once

#include <cstddef>

#include "profile/profile.h"

namespace heaprec::symbolize {

struct Coverage {
  size_t locations = 0;
  size_t unnamed = 0;  // locations without a function name: only an address
  // Named locations of mappings named from symbol tables only (has_functions, no files, no line
  // numbers: the HTTP endpoint's profiles; a Ruby profile's native frames, named after their
  // files), which DWARF would give files and lines.
  size_t names_only = 0;
  bool complete() const { return unnamed == 0; }
  // Whether a symbolizer has something to do: names to add, or names to replace.
  bool NeedsSymbolizing() const { return unnamed != 0 || names_only != 0; }
};

// A location is named when one of its lines has a function with a name. A Ruby profile's own
// frames are written with names, files and lines, and no addresses.
Coverage MeasureCoverage(const profile::Profile& profile);

}  // namespace heaprec::symbolize
