// What the pusher has done with each file, kept beside the profiles in DIR/.heaprec-pushed so that
// a restarted agent (or an agent run after `heaprec run --push`) sends nothing twice and forgets
// nothing that was not accepted. One line per file:
//
//     accepted <TAB> SIZE <TAB> MTIME_NS <TAB> NAME
//     rejected <TAB> SIZE <TAB> MTIME_NS <TAB> NAME
//
// A file is known by its name, size and modification time: one rewritten since (a new process
// reusing the name) is pushed again. The ledger is rewritten atomically (base/file_io.h: a
// temporary file, flushed to the disk, renamed over it) after every change, without the lines of
// files no longer in the directory. Profiles themselves are never deleted or changed by the pusher.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace heaprec::push {

inline constexpr char kLedgerName[] = ".heaprec-pushed";

enum class FileState { kUnknown, kAccepted, kRejected };

struct FileIdentity {
  std::string path;
  std::int64_t size = -1;
  std::int64_t mtime_ns = -1;
};

// The file's identity now; size -1 when it cannot be stat'ed.
FileIdentity Identify(const std::string& path);

class Ledger {
 public:
  // What is recorded for this file (its directory's ledger read on first use).
  FileState Lookup(const FileIdentity& file);
  // Records the file's state and rewrites its directory's ledger; "" or why it could not be
  // written (the state is still kept in memory).
  std::string Record(const FileIdentity& file, FileState state);
  // After heaprec itself rewrote a file it had recorded (symbols added): records its new identity
  // under the same state.
  std::string Refresh(const std::string& path);

 private:
  struct Entry {
    FileState state = FileState::kUnknown;
    std::int64_t size = -1;
    std::int64_t mtime_ns = -1;
  };
  using Directory = std::map<std::string, Entry>;  // by file name
  Directory& Load(const std::string& directory);
  std::string Save(const std::string& directory, const Directory& entries);
  std::map<std::string, Directory> directories_;
};

// "dir/name" -> {"dir", "name"}; "name" -> {".", "name"}.
std::pair<std::string, std::string> SplitPath(const std::string& path);

}  // namespace heaprec::push
