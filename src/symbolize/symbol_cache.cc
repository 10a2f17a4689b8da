#include "symbolize/symbol_cache.h"

#include <errno.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/file_io.h"
#include "symbolize/elf_file.h"

namespace heaprec::symbolize {
namespace {

constexpr char kFormat[] = "heaprec-symbols 2";

bool Clean(const std::string& field) { return field.find_first_of("\t\n") == std::string::npos; }

bool IsBuildId(const std::string& id) {
  if (id.size() < 8 || id.size() > 128) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  std::string::size_type start = 0;
  for (;;) {
    auto tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

bool MakeDirectories(const std::string& path) {
  for (std::string::size_type slash = 1; slash != std::string::npos;) {
    slash = path.find('/', slash + 1);
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace

std::string SymbolCache::DefaultDirectory() {
  if (const char* dir = std::getenv("HEAPREC_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return std::string(dir) == "off" ? "" : dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return std::string(xdg) + "/heaprec/symbols";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return std::string(home) + "/.cache/heaprec/symbols";
  }
  return "";
}

SymbolCache::SymbolCache(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) return;
  // Answers depend on the symbolizer's code: tie them to this very build of it.
  std::string self = ReadElfBuildId("/proc/self/exe");
  if (self.empty()) {
    directory_.clear();  // no way to tell builds apart: no cache
    return;
  }
  stamp_ = std::string(kFormat) + " " + self;
}

SymbolCache::~SymbolCache() { Save(); }

std::string SymbolCache::Source(const std::string& dwarf_file) {
  struct stat st;
  if (dwarf_file.empty() || stat(dwarf_file.c_str(), &st) != 0 || !Clean(dwarf_file)) return "";
  const long long mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL +
                             static_cast<long long>(st.st_mtim.tv_nsec);
  return "dwarf " + dwarf_file + " " + std::to_string(st.st_size) + " " + std::to_string(mtime_ns);
}

std::string SymbolCache::FileFor(const std::string& build_id, const std::string& source) const {
  if (directory_.empty()) return "";
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a: stable across builds and machines
  for (unsigned char c : source) hash = (hash ^ c) * 1099511628211ull;
  char digits[17];
  std::snprintf(digits, sizeof(digits), "%016llx", static_cast<unsigned long long>(hash));
  return directory_ + "/" + build_id + "." + digits;
}

SymbolCache::Binary& SymbolCache::Load(const std::string& build_id, const std::string& source) {
  Binary& binary = binaries_[build_id + "\n" + source];
  if (binary.loaded) return binary;
  binary.loaded = true;
  binary.file = FileFor(build_id, source);
  binary.source = source;
  std::ifstream in(binary.file);
  std::string line;
  if (!in || !std::getline(in, line) || line != stamp_) return binary;
  // Another source whose name hashes alike: not these answers.
  if (!std::getline(in, line) || line != "source\t" + source) return binary;
  while (std::getline(in, line)) {
    std::vector<std::string> f = SplitTabs(line);
    if (f.size() < 3) break;
    char* end = nullptr;
    std::uint64_t offset = std::strtoull(f[0].c_str(), &end, 16);
    std::size_t count = std::strtoul(f[2].c_str(), nullptr, 10);
    if (*end != '\0' || f.size() != 3 + 6 * count) break;  // damaged: keep what was read
    FrameLookup lookup;
    lookup.from_dwarf = f[1] == "1";
    for (std::size_t i = 0; i < count; ++i) {
      const std::string* p = &f[3 + 6 * i];
      lookup.frames.push_back(Frame{p[0], p[1], p[2], std::strtoll(p[3].c_str(), nullptr, 10), p[4],
                                    std::strtoll(p[5].c_str(), nullptr, 10)});
    }
    binary.answers.emplace(offset, std::move(lookup));
  }
  return binary;
}

const FrameLookup* SymbolCache::Find(const std::string& build_id, const std::string& source,
                                     std::uint64_t file_offset) {
  if (directory_.empty() || !IsBuildId(build_id) || source.empty()) return nullptr;
  Binary& binary = Load(build_id, source);
  auto it = binary.answers.find(file_offset);
  return it == binary.answers.end() ? nullptr : &it->second;
}

void SymbolCache::Add(const std::string& build_id, const std::string& source,
                      std::uint64_t file_offset, const FrameLookup& lookup) {
  if (directory_.empty() || !IsBuildId(build_id) || source.empty() || !lookup.from_dwarf) return;
  for (const Frame& f : lookup.frames) {
    if (!Clean(f.name) || !Clean(f.system_name) || !Clean(f.decl_file) || !Clean(f.file)) return;
  }
  Binary& binary = Load(build_id, source);
  if (binary.answers.emplace(file_offset, lookup).second) binary.dirty = true;
}

void SymbolCache::Save() {
  if (directory_.empty()) return;
  bool made = false;
  for (auto& [key, binary] : binaries_) {
    if (!binary.dirty) continue;
    binary.dirty = false;
    if (!made && !(made = MakeDirectories(directory_))) return;
    std::ostringstream text;
    text << stamp_ << "\n"
         << "source\t" << binary.source << "\n";
    for (const auto& [offset, lookup] : binary.answers) {
      text << std::hex << offset << std::dec << '\t' << (lookup.from_dwarf ? 1 : 0) << '\t'
           << lookup.frames.size();
      for (const Frame& f : lookup.frames) {
        text << '\t' << f.name << '\t' << f.system_name << '\t' << f.decl_file << '\t'
             << f.decl_line << '\t' << f.file << '\t' << f.line;
      }
      text << '\n';
    }
    try {
      base::WriteFileAtomically(binary.file, text.str());
    } catch (const base::FileError&) {
      // A cache that cannot be written is no cache: the answers are found again next time.
    }
  }
}

}  // namespace heaprec::symbolize
