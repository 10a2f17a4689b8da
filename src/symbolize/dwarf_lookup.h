// Address -> source frames for one module, with inlined frames expanded, using libdwfl/libdw.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace heaprec::symbolize {

struct Frame {
  std::string name;         // demangled
  std::string system_name;  // mangled (linkage) name, or the plain name when there is none
  std::string decl_file;    // where the function is defined, "" if unknown
  int64_t decl_line = 0;
  std::string file;  // source file of the code at this frame, "" if unknown
  int64_t line = 0;
};

struct FrameLookup {
  std::vector<Frame> frames;  // innermost (inlined) first; empty when nothing is known
  bool from_dwarf = false;    // false: only an ELF symbol name was found
};

// `address` is a module-relative address as libdwfl sees it (ELF vaddr + module bias).
FrameLookup LookupFrames(Dwfl_Module* module, Dwarf_Addr address);

}  // namespace heaprec::symbolize
