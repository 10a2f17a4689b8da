// Inline-aware address lookup. The line table gives the innermost source position; each
// enclosing DW_TAG_inlined_subroutine scope then says where (DW_AT_call_file/call_line) its
// code was inlined into the next outer function, up to the real DW_TAG_subprogram.
#include "symbolize/dwarf_lookup.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <cstdlib>

#include "symbolize/demangle.h"

namespace heaprec::symbolize {
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

// "ns::Class::method" from the namespaces and types enclosing the declaration, for functions GCC
// gives no linkage name (those in anonymous namespaces, some template members). Without a linkage
// name the parameter types are unknown, so none are shown.
std::string QualifiedName(Dwarf_Die* die, const std::string& plain) {
  Dwarf_Die declaration = Declaration(die);
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes_die(&declaration, &scopes);
  std::string qualified = plain;
  for (int i = 1; i < count; ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
        tag != DW_TAG_union_type) {
      continue;
    }
    const char* name = dwarf_diename(&scopes[i]);
    qualified = std::string(name != nullptr ? name : "(anonymous namespace)") + "::" + qualified;
  }
  free(scopes);
  return qualified;
}

Frame FunctionFrame(Dwarf_Die* scope, const std::string& file, int64_t line) {
  Frame f;
  std::string linkage = AttrString(scope, DW_AT_linkage_name);
  if (linkage.empty()) linkage = AttrString(scope, DW_AT_MIPS_linkage_name);
  std::string plain = AttrString(scope, DW_AT_name);
  f.system_name = linkage.empty() ? plain : linkage;
  f.name = linkage.empty() ? QualifiedName(scope, plain) : Demangle(linkage);
  if (f.name.empty()) f.name = "??";
  if (const char* decl_file = dwarf_decl_file(scope)) f.decl_file = decl_file;
  int decl_line = 0;
  if (dwarf_decl_line(scope, &decl_line) == 0) f.decl_line = decl_line;
  f.file = file;
  f.line = line;
  return f;
}

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

FrameLookup LookupFrames(Dwfl_Module* module, Dwarf_Addr address) {
  FrameLookup result;
  std::string file;
  int64_t line = 0;
  if (Dwfl_Line* l = dwfl_module_getsrc(module, address)) {
    int lineno = 0;
    if (const char* src = dwfl_lineinfo(l, nullptr, &lineno, nullptr, nullptr, nullptr)) {
      file = src;
      line = lineno;
    }
  }

  Dwarf_Addr bias = 0;
  if (Dwarf_Die* cu = dwfl_module_addrdie(module, address, &bias)) {
    Dwarf_Die* scopes = nullptr;
    int count = dwarf_getscopes(cu, address - bias, &scopes);
    if (count > 0) {
      // dwarf_getscopes continues past an inlined scope into its abstract definition's parents,
      // not into the function it was inlined into. The physical nesting comes from the DIE tree:
      // the parents of the innermost scope.
      Dwarf_Die innermost = scopes[0];
      std::free(scopes);
      scopes = nullptr;
      count = dwarf_getscopes_die(&innermost, &scopes);
    }
    for (int i = 0; i < count; ++i) {
      int tag = dwarf_tag(&scopes[i]);
      if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
      result.frames.push_back(FunctionFrame(&scopes[i], file, line));
      if (tag == DW_TAG_subprogram) break;  // the real function: no outer frame in this scope
      CallSite(cu, &scopes[i], &file, &line);
    }
    std::free(scopes);
    result.from_dwarf = !result.frames.empty();
  }

  if (result.frames.empty()) {
    // No DWARF for this address: the symbol table still gives a function name.
    GElf_Off offset = 0;
    GElf_Sym sym;
    if (const char* name =
            dwfl_module_addrinfo(module, address, &offset, &sym, nullptr, nullptr, nullptr)) {
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

}  // namespace heaprec::symbolize
