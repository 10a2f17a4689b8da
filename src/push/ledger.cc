#include "push/ledger.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/file_io.h"

namespace heaprec::push {
namespace {

const char* StateName(FileState state) {
  return state == FileState::kAccepted ? "accepted" : "rejected";
}

}  // namespace

std::pair<std::string, std::string> SplitPath(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

FileIdentity Identify(const std::string& path) {
  FileIdentity id;
  id.path = path;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    id.size = st.st_size;
    id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return id;
}

Ledger::Directory& Ledger::Load(const std::string& directory) {
  auto [it, inserted] = directories_.try_emplace(directory);
  if (!inserted) return it->second;
  std::ifstream in(directory + "/" + kLedgerName);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string state, size, mtime, name;
    if (!std::getline(fields, state, '\t') || !std::getline(fields, size, '\t') ||
        !std::getline(fields, mtime, '\t') || !std::getline(fields, name) || name.empty()) {
      continue;  // a comment, or a line from a newer heaprec
    }
    Entry e;
    e.state = state == "accepted"   ? FileState::kAccepted
              : state == "rejected" ? FileState::kRejected
                                    : FileState::kUnknown;
    if (e.state == FileState::kUnknown) continue;
    e.size = std::strtoll(size.c_str(), nullptr, 10);
    e.mtime_ns = std::strtoll(mtime.c_str(), nullptr, 10);
    it->second[name] = e;
  }
  return it->second;
}

std::string Ledger::Save(const std::string& directory, const Directory& entries) {
  std::ostringstream text;
  text << "# heaprec: profiles pushed from this directory (STATE SIZE MTIME_NS NAME); delete a "
          "line to push its file again\n";
  for (const auto& [name, e] : entries) {
    if (Identify(directory + "/" + name).size < 0) continue;  // the file is gone
    text << StateName(e.state) << '\t' << e.size << '\t' << e.mtime_ns << '\t' << name << '\n';
  }
  try {
    base::WriteFileAtomically(directory + "/" + kLedgerName, text.str());
  } catch (const base::FileError& error) {
    return error.what();
  }
  return "";
}

FileState Ledger::Lookup(const FileIdentity& file) {
  auto [directory, name] = SplitPath(file.path);
  const Directory& entries = Load(directory);
  auto it = entries.find(name);
  if (it == entries.end() || it->second.size != file.size || it->second.mtime_ns != file.mtime_ns) {
    return FileState::kUnknown;
  }
  return it->second.state;
}

std::string Ledger::Record(const FileIdentity& file, FileState state) {
  auto [directory, name] = SplitPath(file.path);
  Directory& entries = Load(directory);
  entries[name] = Entry{state, file.size, file.mtime_ns};
  return Save(directory, entries);
}

std::string Ledger::Refresh(const std::string& path) {
  auto [directory, name] = SplitPath(path);
  Directory& entries = Load(directory);
  auto it = entries.find(name);
  if (it == entries.end()) return "";
  FileIdentity now = Identify(path);
  if (now.size == it->second.size && now.mtime_ns == it->second.mtime_ns) return "";
  it->second.size = now.size;
  it->second.mtime_ns = now.mtime_ns;
  return Save(directory, entries);
}

}  // namespace heaprec::push
