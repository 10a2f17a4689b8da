// heaprec's own image in memory, read from its program headers (the linker's __ehdr_start): no
// loader call and no symbol table, so it serves from the first allocation on, before the loader
// has finished starting the process.
#pragma once

#include <cstdint>

namespace heaprec::preload {

struct AddressRange {
  std::uintptr_t low = 0, high = 0;  // [low, high)
  bool Contains(std::uintptr_t address) const { return address >= low && address < high; }
};

// The span of heaprec's PT_LOAD segments whose flags include all of `flags` (PF_X: its code; 0:
// the whole image).
AddressRange OwnLoadedRange(std::uint32_t flags);

}  // namespace heaprec::preload
