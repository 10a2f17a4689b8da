// Replacing many files without freeing an inode for each: heaprec run's rewrite of every profile a
// program's processes wrote (cli/run_symbolizer.h).
//
// WriteFileAtomically renames a new file over the old one, which frees the old file's inode. On
// ext4 without a journal, a freed inode is skipped, at a cost, by every inode allocation in its
// group for up to five minutes (ext4's "recently deleted" check), so every rewrite makes each
// later file creation on the disk dearer, the rewrite's own and the program's (on a parallel
// make, heaprec's rewrite spent half its CPU creating files: docs/benchmarks.md, "the files").
// RecyclingWriter keeps the replaced file's inode instead: just before the rename it
// links the old file under a hidden name in the same directory (a spare), and the next write into
// that directory fills the spare instead of creating a file.
//
// Each write keeps WriteFileAtomically's guarantees: readers see the old file or the complete new
// one, the new file is 0600, `path` is untouched on failure; the new file is on the disk before the
// rename or on its way there, as the writer's Durability says (base/file_io.h). A spare is filled
// again only while it is a regular file of this user's with no other name, so a profile the user
// hard-linked elsewhere is never overwritten. Where hard links cannot be made (no old file, a file
// system without them) a write frees the old inode as WriteFileAtomically does.
// The destructor removes the spares; a heaprec killed by SIGKILL leaves them behind, named
// ".heaprec-spare.*", at most one per concurrent writer and directory.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_io.h"

namespace heaprec::base {

class RecyclingWriter {
 public:
  explicit RecyclingWriter(Durability durability) : durability_(durability) {}
  RecyclingWriter(const RecyclingWriter&) = delete;
  RecyclingWriter& operator=(const RecyclingWriter&) = delete;
  ~RecyclingWriter();

  // Replaces the file at `path` with `data`, as WriteFileAtomically does but for the durability.
  // Thread-safe. Throws FileError.
  void Write(const std::string& path, std::string_view data);

  // The spares kept now, all directories together.
  std::vector<std::string> Spares();

 private:
  // A spare of `dir` ("dir/", or "" for the current directory), opened and emptied, its name in
  // `name`; -1 when there is none fit to fill.
  int TakeSpare(const std::string& dir, std::string* name);

  const Durability durability_;
  std::mutex mutex_;
  std::map<std::string, std::vector<std::string>> spares_;  // by directory; guarded by mutex_
};

}  // namespace heaprec::base
