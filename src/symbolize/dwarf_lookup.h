// Address -> source frames for one module, with inlined frames expanded, using libdwfl/libdw.
//
// What is learnt about a module is kept for every later address, in every profile symbolized with
// the same Symbolizer: each compile unit's tree of function and inlined scopes is built in one
// pass over the unit the first time an address falls in it (a lookup is then a binary search and
// a walk up the tree, instead of a walk over the unit's DIEs per address, which is what
// dwarf_getscopes does), each function's names are computed once, and each address's answer is
// remembered. Without DWARF, the symbol table is searched in a sorted copy.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
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

class DwarfLookup {
 public:
  // `module` must outlive this object.
  explicit DwarfLookup(Dwfl_Module* module);
  ~DwarfLookup();
  DwarfLookup(const DwarfLookup&) = delete;
  DwarfLookup& operator=(const DwarfLookup&) = delete;

  // `address` is a module-relative address as libdwfl sees it (ELF vaddr + module bias).
  const FrameLookup& Lookup(Dwarf_Addr address);

 private:
  struct UnitScopes;
  struct FunctionNames;
  struct Symbol {
    Dwarf_Addr start, end;  // end == start for a symbol of unknown size
    const char* name;       // in the module's ELF string table
    bool global;
  };
  UnitScopes& ScopesOf(Dwarf_Die* cu);
  // Whether code at `pc` (an ELF virtual address) can be real: inside an executable section.
  // The linker leaves the debug info of the code it discarded (a COMDAT copy it did not keep,
  // --gc-sections) at address 0 or a tombstone, where in a PIE it overlaps the program's first
  // real code (_init, _start).
  bool InCode(Dwarf_Addr pc);
  const FunctionNames& NamesOf(Dwarf_Die* scope, const UnitScopes& unit);
  FrameLookup Compute(Dwarf_Addr address);
  const char* SymbolAt(Dwarf_Addr address);

  // The symbol table sorted by address, read once: libdwfl's dwfl_module_addrinfo scans every
  // symbol for each address (cc1plus: 6 s for 10,000 addresses).
  std::vector<Symbol> symbols_;
  bool symbols_read_ = false;
  std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> code_;  // executable sections, [start, end)
  bool code_read_ = false;
  Dwfl_Module* module_;
  std::unordered_map<Dwarf_Addr, FrameLookup> by_address_;
  std::unordered_map<std::uint64_t, std::unique_ptr<UnitScopes>> units_;     // by CU DIE offset
  std::unordered_map<std::uint64_t, std::unique_ptr<FunctionNames>> names_;  // by DIE offset
};

}  // namespace heaprec::symbolize
