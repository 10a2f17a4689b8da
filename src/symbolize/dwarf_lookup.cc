// Inline-aware address lookup. The line table gives the innermost source position; each
// enclosing DW_TAG_inlined_subroutine scope then says where (DW_AT_call_file/call_line) its
// code was inlined into the next outer function, up to the real DW_TAG_subprogram.
#include "symbolize/dwarf_lookup.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "symbolize/demangle.h"

namespace heaprec::symbolize {

// One function or inlined scope of a compile unit: its address ranges and the scope it sits in
// physically (for an inlined scope, the function it was inlined into).
struct ScopeNode {
  Dwarf_Die die;
  int parent;  // index in UnitScopes::nodes, -1 for a top-level function
  int depth;
};
struct ScopeRange {
  Dwarf_Addr low, high;  // [low, high)
  int node;
};

struct DwarfLookup::UnitScopes {
  Dwarf_Die cu;
  // The unit's own code, without what the linker discarded: the addresses its line table may
  // answer for. libdwfl's line lookup answers for any address it attributes to the unit (the gaps
  // between a unit's ranges are the unit's to it), with the nearest row below, which can be one
  // of discarded code's rows at address 0: _start, between main in .text.startup and the rest of
  // the unit's code, had a line from an inline function's discarded copy.
  std::vector<std::pair<Dwarf_Addr, Dwarf_Addr>> own;
  std::vector<ScopeNode> nodes;
  std::vector<ScopeRange> ranges;  // sorted by low
  Dwarf_Addr longest = 0;          // the longest range: how far back a search must look
  // "ns::Class::" for every function declared inside namespaces or types of this unit, by the
  // declaration's DIE offset: what an unqualified name (no linkage name) is qualified with.
  std::unordered_map<Dwarf_Off, std::string> prefixes;
};

struct DwarfLookup::FunctionNames {
  std::string name, system_name, decl_file;
  int64_t decl_line = 0;
};

namespace {

std::string AttrString(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attr;
  // _integrate follows DW_AT_abstract_origin and DW_AT_specification, where inlined instances
  // and out-of-class member definitions keep their names.
  const char* s = dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
  return s ? s : "";
}

// The DIE that declares `die`: inlined instances point at their abstract origin, out-of-line
// definitions at their in-class declaration. Its enclosing scopes give the qualified name.
Dwarf_Die Declaration(Dwarf_Die* die) {
  Dwarf_Die current = *die;
  for (int hops = 0; hops < 8; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die next;
    Dwarf_Attribute* ref = dwarf_attr(&current, DW_AT_abstract_origin, &attr);
    if (ref == nullptr) ref = dwarf_attr(&current, DW_AT_specification, &attr);
    if (ref == nullptr || dwarf_formref_die(ref, &next) == nullptr) break;
    current = next;
  }
  return current;
}

bool IsNamingScope(int tag) {
  return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
         tag == DW_TAG_union_type;
}

// The enclosing namespaces and types of a declaration found outside the unit being indexed (in
// another unit, or a dwz file): the slow way, by libdw's walk from the unit's root.
std::string PrefixBySearch(Dwarf_Die* declaration) {
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes_die(declaration, &scopes);
  std::string prefix;
  for (int i = 1; i < count; ++i) {
    if (!IsNamingScope(dwarf_tag(&scopes[i]))) continue;
    const char* name = dwarf_diename(&scopes[i]);
    prefix = std::string(name != nullptr ? name : "(anonymous namespace)") + "::" + prefix;
  }
  std::free(scopes);
  return prefix;
}

// One pass over a unit's DIE tree: functions and inlined scopes with their ranges and physical
// parents, and the naming prefix of every function declaration.
class UnitIndexer {
 public:
  UnitIndexer(std::vector<ScopeNode>& nodes, std::vector<ScopeRange>& ranges,
              std::unordered_map<Dwarf_Off, std::string>& prefixes,
              const std::function<bool(Dwarf_Addr)>& in_code)
      : nodes_(nodes), ranges_(ranges), prefixes_(prefixes), in_code_(in_code) {}

  void Children(Dwarf_Die* die, int scope, const std::string& prefix, int depth) {
    Dwarf_Die child;
    if (depth > 256 || dwarf_child(die, &child) != 0) return;
    do {
      Visit(&child, scope, prefix, depth + 1);
    } while (dwarf_siblingof(&child, &child) == 0);
  }

 private:
  void Visit(Dwarf_Die* die, int scope, const std::string& prefix, int depth) {
    int tag = dwarf_tag(die);
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      if (tag == DW_TAG_subprogram && !prefix.empty()) prefixes_[dwarf_dieoffset(die)] = prefix;
      int node = AddRanges(die, scope, depth);
      Children(die, node >= 0 ? node : scope, prefix, depth);
    } else if (IsNamingScope(tag)) {
      const char* name = dwarf_diename(die);
      Children(die, scope,
               prefix + (name != nullptr ? name : "(anonymous namespace)") + "::", depth);
    } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
               tag == DW_TAG_catch_block) {
      Children(die, scope, prefix, depth);  // inlined scopes may sit in blocks
    }
  }

  // The scope's ranges, if it has code; returns its node, or -1.
  int AddRanges(Dwarf_Die* die, int parent, int depth) {
    Dwarf_Addr base = 0, low = 0, high = 0;
    ptrdiff_t offset = 0;
    int node = -1;
    while ((offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0) {
      if (high <= low || !in_code_(low)) continue;  // discarded code: not this scope's
      if (node < 0) {
        node = static_cast<int>(nodes_.size());
        nodes_.push_back(ScopeNode{*die, parent, depth});
      }
      ranges_.push_back(ScopeRange{low, high, node});
    }
    return node;
  }

  std::vector<ScopeNode>& nodes_;
  std::vector<ScopeRange>& ranges_;
  std::unordered_map<Dwarf_Off, std::string>& prefixes_;
  const std::function<bool(Dwarf_Addr)>& in_code_;
};

// Where an inlined scope was called from, in the CU's file table.
void CallSite(Dwarf_Die* cu, Dwarf_Die* inlined, std::string* file, int64_t* line) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  *line = dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0
              ? static_cast<int64_t>(value)
              : 0;
  file->clear();
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) == 0 &&
      dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && value < nfiles) {
    if (const char* name = dwarf_filesrc(files, value, nullptr, nullptr)) *file = name;
  }
}

}  // namespace

DwarfLookup::DwarfLookup(Dwfl_Module* module) : module_(module) {}
DwarfLookup::~DwarfLookup() = default;

DwarfLookup::UnitScopes& DwarfLookup::ScopesOf(Dwarf_Die* cu) {
  std::unique_ptr<UnitScopes>& unit = units_[dwarf_dieoffset(cu)];
  if (unit) return *unit;
  unit = std::make_unique<UnitScopes>();
  unit->cu = *cu;
  const std::function<bool(Dwarf_Addr)> in_code = [this](Dwarf_Addr pc) { return InCode(pc); };
  Dwarf_Addr base = 0, low = 0, high = 0;
  for (ptrdiff_t offset = 0; (offset = dwarf_ranges(cu, offset, &base, &low, &high)) > 0;) {
    if (high > low && InCode(low)) unit->own.emplace_back(low, high);
  }
  UnitIndexer(unit->nodes, unit->ranges, unit->prefixes, in_code).Children(cu, -1, "", 0);
  std::sort(unit->ranges.begin(), unit->ranges.end(),
            [](const ScopeRange& a, const ScopeRange& b) { return a.low < b.low; });
  for (const ScopeRange& r : unit->ranges) unit->longest = std::max(unit->longest, r.high - r.low);
  return *unit;
}

const DwarfLookup::FunctionNames& DwarfLookup::NamesOf(Dwarf_Die* scope, const UnitScopes& unit) {
  std::unique_ptr<FunctionNames>& names = names_[dwarf_dieoffset(scope)];
  if (names) return *names;
  names = std::make_unique<FunctionNames>();
  std::string linkage = AttrString(scope, DW_AT_linkage_name);
  if (linkage.empty()) linkage = AttrString(scope, DW_AT_MIPS_linkage_name);
  std::string plain = AttrString(scope, DW_AT_name);
  names->system_name = linkage.empty() ? plain : linkage;
  if (!linkage.empty()) {
    names->name = Demangle(linkage);
  } else {
    // No linkage name (anonymous namespaces, some template members, C): qualified by the
    // declaration's enclosing namespaces and types; without a linkage name the parameter types
    // are unknown, so none are shown.
    Dwarf_Die declaration = Declaration(scope);
    auto prefix = unit.prefixes.find(dwarf_dieoffset(&declaration));
    bool same_unit = declaration.cu == unit.cu.cu;
    names->name = (same_unit ? (prefix != unit.prefixes.end() ? prefix->second : "")
                             : PrefixBySearch(&declaration)) +
                  plain;
  }
  if (names->name.empty()) names->name = "??";
  if (const char* decl_file = dwarf_decl_file(scope)) names->decl_file = decl_file;
  int decl_line = 0;
  if (dwarf_decl_line(scope, &decl_line) == 0) names->decl_line = decl_line;
  return *names;
}

const FrameLookup& DwarfLookup::Lookup(Dwarf_Addr address) {
  auto it = by_address_.find(address);
  if (it != by_address_.end()) return it->second;
  return by_address_.emplace(address, Compute(address)).first->second;
}

FrameLookup DwarfLookup::Compute(Dwarf_Addr address) {
  FrameLookup result;
  std::string file;
  int64_t line = 0;
  if (Dwfl_Line* l = dwfl_module_getsrc(module_, address)) {
    int lineno = 0;
    if (const char* src = dwfl_lineinfo(l, nullptr, &lineno, nullptr, nullptr, nullptr)) {
      file = src;
      line = lineno;
    }
  }

  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module_, address, &bias);
  UnitScopes* unit = cu != nullptr ? &ScopesOf(cu) : nullptr;
  const Dwarf_Addr pc = address - bias;
  if (unit != nullptr && std::none_of(unit->own.begin(), unit->own.end(), [pc](const auto& r) {
        return pc >= r.first && pc < r.second;
      })) {
    unit = nullptr;
  }
  if (unit == nullptr) {
    // No unit has code here (crt1.o's _start, the PLT): the line libdwfl found is another
    // function's, or discarded code's.
    file.clear();
    line = 0;
  } else {
    // The innermost scope containing pc: the deepest of the ranges that contain it, all of which
    // start at or before pc and no earlier than pc - longest.
    auto end = std::upper_bound(unit->ranges.begin(), unit->ranges.end(), pc,
                                [](Dwarf_Addr a, const ScopeRange& r) { return a < r.low; });
    int innermost = -1;
    for (auto r = end; r != unit->ranges.begin();) {
      --r;
      if (pc - r->low > unit->longest) break;
      if (pc < r->high &&
          (innermost < 0 || unit->nodes[r->node].depth > unit->nodes[innermost].depth)) {
        innermost = r->node;
      }
    }
    for (int node = innermost; node >= 0; node = unit->nodes[node].parent) {
      Dwarf_Die* scope = &unit->nodes[node].die;
      const FunctionNames& names = NamesOf(scope, *unit);
      result.frames.push_back(
          Frame{names.name, names.system_name, names.decl_file, names.decl_line, file, line});
      if (dwarf_tag(scope) == DW_TAG_subprogram) break;  // the real function
      CallSite(&unit->cu, scope, &file, &line);
    }
    result.from_dwarf = !result.frames.empty();
  }

  if (result.frames.empty()) {
    // No DWARF for this address: the symbol table still gives a function name.
    if (const char* name = SymbolAt(address)) {
      Frame f;
      f.system_name = name;
      f.name = Demangle(name);
      f.file = file;
      f.line = line;
      result.frames.push_back(std::move(f));
    }
  }
  return result;
}

bool DwarfLookup::InCode(Dwarf_Addr pc) {
  if (!code_read_) {
    code_read_ = true;
    Dwarf_Addr bias = 0;
    Elf* elf = dwfl_module_getelf(module_, &bias);
    Elf_Scn* section = nullptr;
    while (elf != nullptr && (section = elf_nextscn(elf, section)) != nullptr) {
      GElf_Shdr header;
      if (gelf_getshdr(section, &header) != nullptr && (header.sh_flags & SHF_EXECINSTR) != 0 &&
          header.sh_size > 0) {
        code_.emplace_back(header.sh_addr, header.sh_addr + header.sh_size);
      }
    }
    // Without section headers, nothing can be told apart: every address may be code.
    if (code_.empty()) code_.emplace_back(0, ~Dwarf_Addr{0});
  }
  return std::any_of(code_.begin(), code_.end(),
                     [pc](const auto& r) { return pc >= r.first && pc < r.second; });
}

// Like dwfl_module_addrinfo: the symbol whose [start, end) holds the address, a global one before
// a weak or local one of the same start; failing that the nearest symbol of unknown size before it.
const char* DwarfLookup::SymbolAt(Dwarf_Addr address) {
  if (!symbols_read_) {
    symbols_read_ = true;
    int count = dwfl_module_getsymtab(module_);
    for (int i = 1; i < count; ++i) {
      GElf_Sym sym;
      GElf_Addr start = 0;
      GElf_Word section = 0;
      const char* name =
          dwfl_module_getsym_info(module_, i, &sym, &start, &section, nullptr, nullptr);
      int type = GELF_ST_TYPE(sym.st_info);
      if (name == nullptr || *name == '\0' || section == SHN_UNDEF ||
          (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE && type != STT_OBJECT)) {
        continue;
      }
      symbols_.push_back(
          Symbol{start, start + sym.st_size, name, GELF_ST_BIND(sym.st_info) == STB_GLOBAL});
    }
    // By start; at equal starts, the preferred symbol (global, sized) first.
    std::stable_sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
      if (a.start != b.start) return a.start < b.start;
      if (a.global != b.global) return a.global;
      return a.end > b.end;
    });
  }
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](Dwarf_Addr a, const Symbol& s) { return a < s.start; });
  const Symbol* unsized = nullptr;
  // Sized symbols rarely nest: a few steps back is as far as one can still hold the address.
  int steps = 0;
  for (auto s = after; s != symbols_.begin() && steps < 64; ++steps) {
    --s;
    if (s->end > address) {
      // The first symbol of this start is the preferred one.
      auto first = s;
      while (first != symbols_.begin() && (first - 1)->start == s->start &&
             (first - 1)->end > address) {
        --first;
      }
      return first->name;
    }
    if (s->end == s->start && unsized == nullptr) unsized = &*s;
  }
  return unsized != nullptr ? unsized->name : nullptr;
}

}  // namespace heaprec::symbolize
