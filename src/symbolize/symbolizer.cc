// The symbolization driver: one offline Dwfl per distinct binary (keyed by build id, else path)
// kept for the Symbolizer's life, mapping of runtime addresses to ELF virtual addresses, and
// creation of deduplicated Functions.
#include "symbolize/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "symbolize/dwarf_lookup.h"
#include "symbolize/elf_file.h"
#include "symbolize/symbol_cache.h"

namespace heaprec::symbolize {

using profile::Function;
using profile::Line;
using profile::Location;
using profile::Mapping;
using profile::Profile;

enum class ModuleStatus { kOk, kNoFile, kBuildIdMismatch };

// An opened binary. Owns its Dwfl session; the module and Elf pointers belong to it.
struct Symbolizer::Module {
  ModuleStatus status = ModuleStatus::kNoFile;
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  Elf* elf = nullptr;
  Dwarf_Addr bias = 0;  // module address = ELF vaddr + bias
  // A separate debug file (the binary is gone): its program headers lost the file offsets.
  bool debug_only = false;
  std::unique_ptr<DwarfLookup> lookup;  // once opened

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

// libdwfl's stock offline callbacks; separate debug files are looked up through build ids and
// .gnu_debuglink in the standard places.
char* debuginfo_path = nullptr;
const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  // A profile can name anything; opening a FIFO or a device could block or have side effects.
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Opens `path` in a fresh Dwfl. Returns false when it is not a readable ELF file.
bool Open(const std::string& path, Module& m) {
  if (!IsRegularFile(path)) return false;
  m.dwfl = dwfl_begin(&kOfflineCallbacks);
  if (m.dwfl == nullptr) return false;
  dwfl_report_begin(m.dwfl);
  // base 0 with add_p_vaddr: module addresses are the ELF's own virtual addresses, for ET_DYN
  // and ET_EXEC alike (the bias read back below is then 0, but we never rely on that).
  m.module = dwfl_report_elf(m.dwfl, path.c_str(), path.c_str(), -1, 0, true);
  dwfl_report_end(m.dwfl, nullptr, nullptr);
  if (m.module != nullptr) m.elf = dwfl_module_getelf(m.module, &m.bias);
  if (m.elf == nullptr) {
    dwfl_end(m.dwfl);
    m.dwfl = nullptr;
    m.module = nullptr;
    return false;
  }
  return true;
}

std::unique_ptr<Module> OpenModule(const Mapping& mapping, const SymbolizeOptions& options) {
  auto m = std::make_unique<Module>();
  std::string path = mapping.filename;
  static constexpr std::string_view kDeleted = " (deleted)";
  bool deleted = path.size() > kDeleted.size() && path.ends_with(kDeleted);
  if (deleted) path.resize(path.size() - kDeleted.size());

  std::vector<std::string> candidates;
  // Pseudo files ("[vdso]", "[heap]", anonymous) have no path. A deleted file's path may now
  // hold another binary, which only a build id can rule out.
  if (path.starts_with("/") && (!deleted || !mapping.build_id.empty())) candidates.push_back(path);
  if (mapping.build_id.size() > 2) {
    candidates.push_back(options.debug_root + "/.build-id/" + mapping.build_id.substr(0, 2) + "/" +
                         mapping.build_id.substr(2) + ".debug");
  }
  for (const std::string& candidate : candidates) {
    if (!Open(candidate, *m)) continue;
    if (!mapping.build_id.empty() && ElfBuildId(m->elf) != mapping.build_id) {
      // A different build of the program: its addresses would name the wrong code.
      m->status = ModuleStatus::kBuildIdMismatch;
      dwfl_end(m->dwfl);
      m->dwfl = nullptr;
      m->module = nullptr;
      m->elf = nullptr;
      continue;
    }
    m->status = ModuleStatus::kOk;
    m->debug_only = IsDebugOnlyFile(m->elf);
    m->lookup = std::make_unique<DwarfLookup>(m->module);
    return m;
  }
  return m;
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
      cache_(std::make_unique<SymbolCache>(options_.cache_directory)) {
  elf_version(EV_CURRENT);
}
Symbolizer::~Symbolizer() = default;

SymbolizeOptions CommandLineSymbolizeOptions() {
  SymbolizeOptions options;
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

  for (Location& loc : profile.locations) {
    ++stats.locations;
    if (!loc.lines.empty()) {
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
    const FrameLookup* found = has_offset ? cache_->Find(mapping.build_id, file_offset) : nullptr;
    if (found == nullptr) {
      std::string key =
          mapping.build_id.empty() ? "path:" + mapping.filename : "build-id:" + mapping.build_id;
      std::unique_ptr<Module>& module = modules_[key];
      if (!module) module = OpenModule(mapping, options_);
      if (module->status == ModuleStatus::kNoFile) {
        ++stats.no_file;
        continue;
      }
      if (module->status == ModuleStatus::kBuildIdMismatch) {
        ++stats.build_id_mismatch;
        continue;
      }
      // Runtime address -> file offset (through the mapping) -> ELF vaddr (through PT_LOAD). A
      // debug-only file's PT_LOAD offsets are not the binary's: there the mapping's start gives
      // the segment's.
      std::optional<uint64_t> vaddr;
      if (module->debug_only) {
        vaddr = MappedAddressToVaddr(module->elf, loc.address, mapping.memory_start,
                                     mapping.memory_limit, page_size);
      } else if (has_offset) {
        vaddr = FileOffsetToVaddr(module->elf, file_offset);
      }
      static const FrameLookup kNothing;
      found = vaddr ? &module->lookup->Lookup(*vaddr + module->bias) : &kNothing;
      if (has_offset && !module->debug_only) cache_->Add(mapping.build_id, file_offset, *found);
    }
    const FrameLookup& lookup = *found;
    if (lookup.frames.empty()) {
      ++stats.no_symbols;
      continue;
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

}  // namespace heaprec::symbolize
