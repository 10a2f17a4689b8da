#include "cli/install_layout.h"

#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#ifndef HEAPREC_PRELOAD_DIR_FROM_BINDIR
#error "HEAPREC_PRELOAD_DIR_FROM_BINDIR: the relative path from bindir to libdir/heaprec (CMake)"
#endif

namespace heaprec::cli {
namespace {

// The identifying part of an ELF header: e_ident, e_type and e_machine sit at the same offsets in
// ELF32 and ELF64 headers.
struct ElfIdentity {
  unsigned char ident[EI_NIDENT];
  Elf64_Half type;
  Elf64_Half machine;
};

bool ReadIdentity(const std::string& path, ElfIdentity* identity) {
  std::ifstream in(path, std::ios::binary);
  return in.read(reinterpret_cast<char*>(identity), sizeof(*identity)) &&
         std::memcmp(identity->ident, ELFMAG, SELFMAG) == 0;
}

}  // namespace

std::vector<std::string> PreloadLibraryCandidates(const std::string& executable) {
  std::filesystem::path directory = std::filesystem::path(executable).parent_path();
  std::vector<std::string> candidates;
  for (const char* relative : {HEAPREC_PRELOAD_DIR_FROM_BINDIR "/libheaprec.so",  // installed
                               "../lib/libheaprec.so"}) {                         // build tree
    std::string path = (directory / relative).lexically_normal().string();
    if (candidates.empty() || candidates.back() != path) candidates.push_back(path);
  }
  return candidates;
}

std::string PreloadLibraryProblem(const std::string& path, const std::string& executable) {
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return "no such file";
  if (!std::filesystem::is_regular_file(status)) return "not a regular file";
  ElfIdentity library{}, self{};
  if (!ReadIdentity(path, &library)) return "not an ELF file";
  if (library.ident[EI_DATA] != ELFDATA2LSB && library.ident[EI_DATA] != ELFDATA2MSB) {
    return "not an ELF file";
  }
  if (!ReadIdentity(executable, &self)) return {};  // nothing to compare with: the loader decides
  if (library.ident[EI_CLASS] != self.ident[EI_CLASS] ||
      library.ident[EI_DATA] != self.ident[EI_DATA]) {
    return "built for another machine";
  }
  // Both in the file's byte order, which is now known to be this machine's.
  if (library.machine != self.machine) return "built for another machine";
  if (library.type != ET_DYN) return "not a shared object";
  return {};
}

const char* ExplicitPreloadLibrary() {
  const char* path = std::getenv("HEAPREC_LIBRARY");
  return path != nullptr && *path != '\0' ? path : nullptr;
}

std::string FindPreloadLibrary(std::string* error) {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (const char* explicit_path = ExplicitPreloadLibrary()) {
    std::string problem = PreloadLibraryProblem(explicit_path, self);
    if (problem.empty()) return explicit_path;
    *error = std::string("HEAPREC_LIBRARY=") + explicit_path + ": " + problem;
    return {};
  }
  std::string tried;
  for (const std::string& candidate : PreloadLibraryCandidates(self)) {
    std::string problem = PreloadLibraryProblem(candidate, self);
    if (problem.empty()) return candidate;
    if (problem != "no such file") {
      *error = candidate + ": " + problem + "; set HEAPREC_LIBRARY";
      return {};
    }
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  *error = "cannot find libheaprec.so (tried " + tried + "); set HEAPREC_LIBRARY to its path";
  return {};
}

std::string InstalledRubyLibrary(const std::string& executable) {
#ifdef HEAPREC_RUBY_LIB_FROM_BINDIR
  std::filesystem::path directory = std::filesystem::path(executable).parent_path();
  std::filesystem::path lib = (directory / HEAPREC_RUBY_LIB_FROM_BINDIR).lexically_normal();
  std::filesystem::path arch = (directory / HEAPREC_RUBY_ARCH_FROM_BINDIR).lexically_normal();
  std::error_code ec;
  if (std::filesystem::is_regular_file(lib / "heaprec" / "autorun.rb", ec)) {
    return lib.string() + ":" + arch.string();
  }
#else
  (void)executable;
#endif
  return {};
}

}  // namespace heaprec::cli
