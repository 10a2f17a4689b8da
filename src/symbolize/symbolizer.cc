// The symbolization driver: one offline Dwfl per distinct binary (keyed by build id, else path)
// kept for the Symbolizer's life, mapping of runtime addresses to ELF virtual addresses, and
// creation of deduplicated Functions.
#include "symbolize/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "symbolize/debuginfod.h"
#include "symbolize/dwarf_lookup.h"
#include "symbolize/elf_file.h"
#include "symbolize/file_search.h"
#include "symbolize/symbol_cache.h"

namespace heaprec::symbolize {

using profile::Function;
using profile::Line;
using profile::Location;
using profile::Mapping;
using profile::Profile;

enum class ModuleStatus { kOk, kNoFile, kBuildIdMismatch };

// A binary the profiles name, opened when the cache does not answer for it. Owns its Dwfl
// session; the module and Elf pointers belong to it.
struct Symbolizer::Module {
  bool searched = false;  // its files were looked for (OpenModule)
  ModuleStatus status = ModuleStatus::kNoFile;
  std::string path;  // as the first mapping that named it recorded it
  std::string build_id;
  FoundFiles files;
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Elf* elf = nullptr;
  Dwarf_Addr bias = 0;  // module address = ELF vaddr + bias
  // A separate debug file (the binary is gone): its program headers lost the file offsets.
  bool debug_only = false;
  std::unique_ptr<DwarfLookup> lookup;  // once opened
  std::string cache_source;       // SymbolCache::Source of the file with its DWARF; "" for none
  size_t named = 0, unnamed = 0;  // locations it was asked about, over every profile, cache too
  size_t from_cache = 0;          // of the named, those the cache answered

  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() {
    lookup.reset();  // before the Dwfl it reads
    if (dwfl) dwfl_end(dwfl);
  }
};

namespace {

using Module = Symbolizer::Module;

// The debug file FindFiles chose, handed to libdwfl when it wants the DWARF of a binary that has
// none of its own. Nothing else is searched: libdwfl's standard search would look in places of its
// own (and ask debuginfod itself), outside the order FindFiles follows and reports.
int ChosenDebugFile(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*,
                    const char*, GElf_Word, char** debuginfo_file_name) {
  const auto* m = static_cast<const Module*>(*userdata);
  if (m == nullptr || m->files.debug.empty()) return -1;
  int fd = open(m->files.debug.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *debuginfo_file_name = strdup(m->files.debug.c_str());
  return fd;
}

// Every module is reported with its file (dwfl_report_elf): libdwfl never has to find one.
int NoOtherElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) { return -1; }

const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = NoOtherElf,
    .find_debuginfo = ChosenDebugFile,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

// Opens `path` in a fresh Dwfl. Returns false when it is not a readable ELF file.
bool Open(const std::string& path, Module& m) {
  m.dwfl = dwfl_begin(&kOfflineCallbacks);
  if (m.dwfl == nullptr) return false;
  dwfl_report_begin(m.dwfl);
  // base 0 with add_p_vaddr: module addresses are the ELF's own virtual addresses, for ET_DYN
  // and ET_EXEC alike (the bias read back below is then 0, but we never rely on that).
  m.module = dwfl_report_elf(m.dwfl, path.c_str(), path.c_str(), -1, 0, true);
  dwfl_report_end(m.dwfl, nullptr, nullptr);
  if (m.module != nullptr) {
    void** userdata = nullptr;
    dwfl_module_info(m.module, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (userdata != nullptr) *userdata = &m;  // for ChosenDebugFile
    m.elf = dwfl_module_getelf(m.module, &m.bias);
  }
  if (m.elf == nullptr) {
    dwfl_end(m.dwfl);
    m.dwfl = nullptr;
    m.module = nullptr;
    return false;
  }
  return true;
}

void OpenModule(Module& m, const SearchPaths& paths, DebuginfodClient& debuginfod) {
  m.searched = true;
  m.files = FindFiles(m.path, m.build_id, paths, debuginfod);
  // The binary, its DWARF from the debug file if it has none; else the debug file alone.
  const std::string& main_file = m.files.binary.empty() ? m.files.debug : m.files.binary;
  if (!main_file.empty() && Open(main_file, m)) {
    m.status = ModuleStatus::kOk;
    // The cache keeps answers of this very DWARF only (symbol_cache.h).
    const std::string& dwarf_file = !m.files.debug.empty()     ? m.files.debug
                                    : m.files.binary_has_dwarf ? m.files.binary
                                                               : std::string();
    m.cache_source = SymbolCache::Source(dwarf_file);
    m.debug_only = m.files.binary.empty() && IsDebugOnlyFile(m.elf);
    m.lookup = std::make_unique<DwarfLookup>(m.module);
    return;
  }
  m.status = m.files.other_build ? ModuleStatus::kBuildIdMismatch : ModuleStatus::kNoFile;
}

// Finds or creates Function entries, deduplicated on (name, system_name, filename).
class FunctionTable {
 public:
  explicit FunctionTable(Profile& profile) : profile_(profile) {
    for (const Function& f : profile.functions) {
      by_key_.try_emplace(std::tie(f.name, f.system_name, f.filename), f.id);
      next_id_ = std::max(next_id_, f.id + 1);
    }
  }

  uint64_t Get(const Frame& frame) {
    const std::string& filename = frame.decl_file.empty() ? frame.file : frame.decl_file;
    auto it = by_key_.find(std::tie(frame.name, frame.system_name, filename));
    if (it != by_key_.end()) return it->second;
    Function f;
    f.id = next_id_++;
    f.name = frame.name;
    f.system_name = frame.system_name;
    f.filename = filename;
    f.start_line = frame.decl_line;
    by_key_.emplace(std::make_tuple(f.name, f.system_name, f.filename), f.id);
    profile_.functions.push_back(std::move(f));
    return next_id_ - 1;
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  Profile& profile_;
  std::map<Key, uint64_t, std::less<>> by_key_;
  uint64_t next_id_ = 1;
};

}  // namespace

Symbolizer::Symbolizer(SymbolizeOptions options)
    : options_(std::move(options)),
      debuginfod_(std::make_unique<DebuginfodClient>(options_.debuginfod_urls)),
      cache_(std::make_unique<SymbolCache>(options_.cache_directory)) {
  elf_version(EV_CURRENT);
}
Symbolizer::~Symbolizer() = default;

namespace {

// The directories of a colon-separated list, as PATH-like variables hold them.
std::vector<std::string> SplitPathList(const char* list) {
  std::vector<std::string> dirs;
  if (list == nullptr) return dirs;
  std::string_view rest = list;
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    if (!dir.empty()) dirs.emplace_back(dir);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return dirs;
}

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

SymbolizeOptions CommandLineSymbolizeOptions() {
  SymbolizeOptions options;
  const char* binary_path = NonEmptyEnv("HEAPREC_BINARY_PATH");
  options.binary_paths =
      SplitPathList(binary_path ? binary_path : NonEmptyEnv("PPROF_BINARY_PATH"));
  options.debug_paths = SplitPathList(NonEmptyEnv("HEAPREC_DEBUG_PATH"));
  if (std::find(options.debug_paths.begin(), options.debug_paths.end(), kSystemDebugPath) ==
      options.debug_paths.end()) {
    options.debug_paths.push_back(kSystemDebugPath);
  }
  if (const char* urls = NonEmptyEnv("DEBUGINFOD_URLS")) options.debuginfod_urls = urls;
  options.cache_directory = SymbolCache::DefaultDirectory();
  return options;
}

SymbolizeStats Symbolize(Profile& profile, const SymbolizeOptions& options) {
  return Symbolizer(options).Symbolize(profile);
}

SymbolizeStats Symbolizer::Symbolize(Profile& profile) {
  SymbolizeStats stats;
  std::unordered_map<uint64_t, Mapping*> mappings;
  for (Mapping& m : profile.mappings) mappings[m.id] = &m;
  FunctionTable functions(profile);
  // Profiles are symbolized on the kind of machine that recorded them.
  const long system_page_size = sysconf(_SC_PAGESIZE);
  const uint64_t page_size = system_page_size > 0 ? static_cast<uint64_t>(system_page_size) : 4096;

  // Mappings named from symbol tables only (has_functions without files or line numbers: the HTTP
  // endpoint's profiles, pprof's remote symbolization): their locations are looked up again, and
  // their names kept where the files give none.
  std::unordered_set<uint64_t> names_only;
  for (const Mapping& m : profile.mappings) {
    if (m.has_functions && !m.has_filenames && !m.has_line_numbers) names_only.insert(m.id);
  }

  for (Location& loc : profile.locations) {
    ++stats.locations;
    const bool renaming = !loc.lines.empty() && names_only.count(loc.mapping_id) != 0;
    if (!loc.lines.empty() && !renaming) {
      ++stats.symbolized;
      continue;
    }
    auto mit = mappings.find(loc.mapping_id);
    if (mit == mappings.end()) {
      ++stats.no_file;
      continue;
    }
    Mapping& mapping = *mit->second;
    const bool has_offset = loc.address >= mapping.memory_start;
    const uint64_t file_offset = loc.address - mapping.memory_start + mapping.file_offset;
    Module& module = ModuleFor(mapping);
    if (!module.searched) {
      OpenModule(module, {options_.binary_paths, options_.debug_paths}, *debuginfod_);
    }
    if (module.status != ModuleStatus::kOk && renaming) {
      ++stats.symbolized;
      continue;
    }
    if (module.status != ModuleStatus::kOk) {
      ++module.unnamed;
      ++(module.status == ModuleStatus::kNoFile ? stats.no_file : stats.build_id_mismatch);
      continue;
    }
    // The cache answers only for the DWARF the search found now (module.cache_source).
    const FrameLookup* found =
        has_offset ? cache_->Find(mapping.build_id, module.cache_source, file_offset) : nullptr;
    if (found != nullptr) {
      ++module.from_cache;
    } else {
      // Runtime address -> file offset (through the mapping) -> ELF vaddr (through PT_LOAD). A
      // debug-only file's PT_LOAD offsets are not the binary's: there the mapping's start gives
      // the segment's.
      std::optional<uint64_t> vaddr;
      if (module.debug_only) {
        vaddr = MappedAddressToVaddr(module.elf, loc.address, mapping.memory_start,
                                     mapping.memory_limit, page_size);
      } else if (has_offset) {
        vaddr = FileOffsetToVaddr(module.elf, file_offset);
      }
      static const FrameLookup kNothing;
      found = vaddr ? &module.lookup->Lookup(*vaddr + module.bias) : &kNothing;
      if (has_offset && !module.debug_only && found->from_dwarf) {
        cache_->Add(mapping.build_id, module.cache_source, file_offset, *found);
      }
    }
    ++(found->frames.empty() ? module.unnamed : module.named);
    const FrameLookup& lookup = *found;
    if (lookup.frames.empty() && renaming) {
      ++stats.symbolized;
      continue;
    }
    if (lookup.frames.empty()) {
      ++stats.no_symbols;
      continue;
    }
    if (renaming) {
      loc.lines.clear();
      ++stats.renamed;
    }
    for (const Frame& frame : lookup.frames) {
      loc.lines.push_back(Line{functions.Get(frame), frame.line});
      mapping.has_filenames |= !frame.file.empty() || !frame.decl_file.empty();
      mapping.has_line_numbers |= frame.line > 0;
    }
    mapping.has_functions = true;
    mapping.has_inline_frames |= lookup.from_dwarf;
    ++stats.symbolized;
  }
  return stats;
}

Symbolizer::Module& Symbolizer::ModuleFor(const Mapping& mapping) {
  std::string key =
      mapping.build_id.empty() ? "path:" + mapping.filename : "build-id:" + mapping.build_id;
  std::unique_ptr<Module>& module = modules_[key];
  if (!module) {
    module = std::make_unique<Module>();
    module->path = mapping.filename;
    module->build_id = mapping.build_id;
    met_.push_back(module.get());
  }
  return *module;
}

std::vector<CachedBinary> Symbolizer::FromCache() const {
  std::vector<CachedBinary> cached;
  for (const Module* m : met_) {
    if (m->from_cache == 0) continue;
    const std::string& dwarf_file = m->files.debug.empty() ? m->files.binary : m->files.debug;
    cached.push_back({m->path, m->build_id, dwarf_file,
                      cache_->FileFor(m->build_id, m->cache_source), m->from_cache});
  }
  return cached;
}

std::vector<UnresolvedBinary> Symbolizer::Unresolved() const {
  std::vector<UnresolvedBinary> unresolved;
  for (const Module* m : met_) {
    if (m->named > 0 || m->unnamed == 0 || m->path.empty() || m->path.front() == '[') continue;
    UnresolvedBinary binary;
    binary.reason = m->status == ModuleStatus::kOk ? UnresolvedBinary::Reason::kNoDebugInfo
                                                   : UnresolvedBinary::Reason::kNotFound;
    binary.path = m->path;
    binary.build_id = m->build_id;
    binary.found_binary = m->files.binary;
    binary.looked_in = m->files.looked_in;
    binary.locations = m->unnamed;
    unresolved.push_back(std::move(binary));
  }
  return unresolved;
}

}  // namespace heaprec::symbolize
