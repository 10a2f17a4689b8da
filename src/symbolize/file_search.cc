// The search order of file_search.h, step by step.
#include "symbolize/file_search.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

#include "symbolize/elf_file.h"

namespace heaprec::symbolize {
namespace {

constexpr std::string_view kDeleted = " (deleted)";

// DIR + "/" + REST, whatever slashes either has at the joint ("/srv/bin/" and "/opt/app").
std::string Join(const std::string& dir, std::string_view rest) {
  std::string joined = dir;
  while (joined.size() > 1 && joined.back() == '/') joined.pop_back();
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  return joined + "/" + std::string(rest);
}

std::string Abbreviated(const std::string& build_id) {
  if (build_id.empty()) return "no build id";
  return build_id.size() > 12 ? build_id.substr(0, 12) + "…" : build_id;
}

// The files of DIR, sorted; none when it is not a readable directory.
std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code ignored;
    if (entry.is_regular_file(ignored)) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class Search {
 public:
  Search(std::string build_id, FoundFiles& found) : build_id_(std::move(build_id)), found_(found) {}

  void Note(const std::string& place) {
    auto& places = found_.looked_in;
    if (std::find(places.begin(), places.end(), place) == places.end()) places.push_back(place);
  }

  // Takes `path` as the binary if it is an ELF file of the recorded build. `note_missing`: name
  // the path in the messages when nothing is there.
  bool TryBinary(const std::string& path, bool note_missing) {
    ElfFacts facts = ReadElfFacts(path);
    if (!facts.readable) {
      if (note_missing) Note(path);
      return false;
    }
    if (!Acceptable(path, facts)) return false;
    found_.binary = path;
    binary_ = facts;
    found_.looked_in.clear();  // from here on, messages are about its debug file
    return true;
  }

  // Takes `path` in place of a stripped binary found earlier when it is the same build (the same
  // build id: never without one) with DWARF of its own: the unstripped build of that binary.
  bool TryUnstripped(const std::string& path) {
    ElfFacts facts = ReadElfFacts(path);
    if (!facts.readable || !facts.elf) return false;
    if (facts.build_id != build_id_) {
      Note(path + " (another build: " + Abbreviated(facts.build_id) + ")");
      found_.other_build = true;
      return false;
    }
    if (!facts.dwarf) return false;
    found_.binary = path;
    binary_ = facts;
    return true;
  }

  // Takes `path` as the separate debug file if it has DWARF and belongs to the binary: the same
  // build id, or, without one, the CRC its .gnu_debuglink names.
  bool TryDebug(const std::string& path, const std::string& build_id, std::optional<uint32_t> crc,
                bool note_missing) {
    ElfFacts facts = ReadElfFacts(path);
    if (!facts.readable) {
      if (note_missing) Note(path);
      return false;
    }
    if (!facts.elf || !facts.dwarf) {
      Note(path + (facts.elf ? " (no debug info in it)" : " (not an ELF file)"));
      return false;
    }
    if (!build_id.empty()) {
      if (!Acceptable(path, facts, build_id)) return false;
    } else if (!crc || FileCrc32(path) != crc) {
      Note(path + " (not the binary's .gnu_debuglink CRC)");
      return false;
    }
    found_.debug = path;
    return true;
  }

  const std::string& build_id() const { return build_id_; }
  const ElfFacts& binary() const { return binary_; }

 private:
  bool Acceptable(const std::string& path, const ElfFacts& facts) {
    return Acceptable(path, facts, build_id_);
  }
  bool Acceptable(const std::string& path, const ElfFacts& facts, const std::string& build_id) {
    if (!facts.elf) {
      Note(path + " (not an ELF file)");
      return false;
    }
    if (!build_id.empty() && facts.build_id != build_id) {
      Note(path + " (another build: " + Abbreviated(facts.build_id) + ")");
      found_.other_build = true;
      return false;
    }
    return true;
  }

  std::string build_id_;
  FoundFiles& found_;
  ElfFacts binary_;
};

// pprof's candidates for one directory of PPROF_BINARY_PATH (its locateBinaries), in its order.
std::vector<std::string> BinaryCandidates(const std::string& dir, const std::string& path,
                                          const std::string& build_id) {
  std::vector<std::string> candidates;
  const std::string name = std::filesystem::path(path).filename().string();
  if (!build_id.empty()) {
    if (!name.empty()) candidates.push_back(Join(dir, build_id + "/" + name));
    for (std::string& file : FilesIn(Join(dir, build_id))) candidates.push_back(std::move(file));
    if (!path.empty()) candidates.push_back(Join(dir, path + "/" + build_id));  // perf's layout
  }
  if (!name.empty()) candidates.push_back(Join(dir, name));
  if (!path.empty() && path != name) candidates.push_back(Join(dir, path));
  return candidates;
}

}  // namespace

FoundFiles FindFiles(const std::string& recorded_path, const std::string& build_id,
                     const SearchPaths& paths, DebuginfodClient& debuginfod) {
  FoundFiles found;
  Search search(build_id, found);
  std::string path = recorded_path;
  const bool deleted = path.size() > kDeleted.size() && path.ends_with(kDeleted);
  if (deleted) path.resize(path.size() - kDeleted.size());
  // "[vdso]", "[heap]", "": pseudo files, with no file anywhere.
  const bool named = !path.empty() && path.front() != '[';

  // 1. Where the profile says.
  if (named && path.front() == '/') {
    if (!deleted || !build_id.empty()) {
      search.TryBinary(path, true);
    } else {
      search.Note(path + " (deleted, and no build id to tell a file there now from it)");
    }
  }
  // 2. The binary paths: for a binary not found yet, and for one found stripped (no DWARF), whose
  // unstripped build of the same build id is there (pprof searches them before the recorded path).
  const bool stripped = !found.binary.empty() && !search.binary().dwarf && !build_id.empty();
  if (named && (found.binary.empty() || stripped)) {
    for (const std::string& dir : paths.binary_paths) {
      bool taken = false;
      for (const std::string& candidate : BinaryCandidates(dir, path, build_id)) {
        taken = stripped ? search.TryUnstripped(candidate) : search.TryBinary(candidate, false);
        if (taken) break;
      }
      if (taken) break;
      search.Note("binary path " + dir);  // every directory given is named in the messages
    }
  }
  if (!found.binary.empty() && search.binary().dwarf) {
    found.binary_has_dwarf = true;
    return found;
  }

  // 3. A separate debug file.
  const std::string id = build_id.empty() ? search.binary().build_id : build_id;
  const std::string& link = search.binary().debuglink;
  std::optional<uint32_t> crc;
  if (!link.empty()) crc = search.binary().debuglink_crc;
  // Where the binary is installed: what distributions' debug packages mirror under /usr/lib/debug.
  std::string installed_dir;
  if (named && path.front() == '/') {
    installed_dir = std::filesystem::path(path).parent_path().string();
  } else if (!found.binary.empty()) {
    installed_dir = std::filesystem::path(found.binary).parent_path().string();
  }
  if (!found.binary.empty() && !link.empty()) {
    const std::string dir = std::filesystem::path(found.binary).parent_path().string();
    for (const std::string& candidate : {Join(dir, link), Join(dir, ".debug/" + link)}) {
      if (search.TryDebug(candidate, id, crc, true)) return found;
    }
  }
  for (const std::string& dir : paths.debug_paths) {
    std::vector<std::string> candidates;
    if (id.size() > 2) {
      candidates.push_back(
          Join(dir, ".build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug"));
    }
    if (!link.empty() && !installed_dir.empty()) {
      candidates.push_back(Join(dir, installed_dir + "/" + link));
    } else if (!id.empty() && named && path.front() == '/') {
      candidates.push_back(Join(dir, path + ".debug"));
    }
    for (const std::string& candidate : candidates) {
      if (search.TryDebug(candidate, id, crc, false)) return found;
    }
    if (!candidates.empty()) search.Note("debug path " + dir);
  }

  // 4. debuginfod, by build id.
  if (id.empty() || !debuginfod.enabled()) return found;
  DebuginfodClient::Result debug = debuginfod.Find(DebuginfodClient::Artifact::kDebugInfo, id);
  if (!debug.path.empty() && search.TryDebug(debug.path, id, std::nullopt, false)) return found;
  std::string why = debug.error.empty() ? "no usable debug file" : debug.error;
  if (found.binary.empty()) {
    DebuginfodClient::Result binary = debuginfod.Find(DebuginfodClient::Artifact::kExecutable, id);
    if (!binary.path.empty() && search.TryBinary(binary.path, false)) return found;
  }
  search.Note("debuginfod " + debuginfod.urls() + " (" + why + ")");
  return found;
}

}  // namespace heaprec::symbolize
