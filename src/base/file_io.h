// Whole files for the heaprec command: one way to read a file, and one way to replace one. Every
// file the CLI side writes (profiles, flame pages, charts, the push ledger, the symbol cache) goes
// through WriteFileAtomically, so each has the same guarantees.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace heaprec::base {

// A file could not be read or written. what() is one line naming the path and the reason;
// error_number() is the errno behind it, for a caller that words some reasons itself.
class FileError : public std::runtime_error {
 public:
  FileError(const std::string& what, int error_number)
      : std::runtime_error(what), error_number_(error_number) {}
  int error_number() const { return error_number_; }

 private:
  int error_number_;
};

// The whole content of the file at `path`. Throws FileError: "cannot open PATH: REASON" or
// "cannot read PATH: REASON".
std::string ReadFile(const std::string& path);

// How a new file's content is on its way to the disk when the rename makes it the file. Readers
// see the old file or the complete new one either way, and a failed write leaves the old file.
enum class Durability {
  // fsync, then the rename: after a power loss the name holds the old content or the new, never
  // an empty file. A journaling file system commits its journal for each file (ext4: one commit
  // per fsync). For files that must not forget (the push ledger) or that may be old and precious
  // (heaprec symbolize in place).
  kSyncedBeforeRename,
  // The data's writeback started (sync_file_range), not waited for, then the rename: no journal
  // commit of its own, and the disk sees the data within moments rather than at the next periodic
  // writeback. After a power loss in those moments the name may be an empty file, as a file any
  // program wrote just before is. For heaprec run's rewrite of the profiles the program's processes
  // have just written, which nothing synced either (docs/design/symbolization.md).
  kWritebackStarted,
};

// Writes `data` to a new 0600 file next to `path` (profiles and what is made of them reveal program
// internals), flushes it to the disk (kSyncedBeforeRename), then renames it over `path`: readers
// see the old file or the complete new one, and neither a crash, a power loss nor a full disk
// leaves a truncated file. The temporary file has an unpredictable name and is created with
// O_EXCL|O_NOFOLLOW, so nothing planted under that name (a symlink, another user's file) is ever
// opened. On any failure the temporary file is removed and FileError ("cannot write PATH: ...") is
// thrown; `path` is left untouched.
void WriteFileAtomically(const std::string& path, std::string_view data);

namespace detail {
// WriteFileAtomically with the temporary names' suffixes taken from `next_suffix`, in place of
// random ones: the tests plant files at the names it will try.
void WriteFileAtomically(const std::string& path, std::string_view data,
                         const std::function<std::string()>& next_suffix);

// An unpredictable suffix, so that another user cannot pre-create a temporary file's name.
std::string RandomSuffix();

// The steps of WriteFileAtomically, for the writer that recycles its temporary files
// (base/recycling_writer.h). A new, empty 0600 temporary file beside `path`, created as
// WriteFileAtomically creates it (its name in `name`); throws FileError.
int CreateTemporaryFile(const std::string& path, const std::function<std::string()>& next_suffix,
                        std::string* name);
// Writes all of `data` to `fd` (the temporary file `name`, for `path`), sends it on its way to the
// disk as `durability` says and closes it; on failure removes `name` and throws FileError. `fd` is
// closed either way.
void FillTemporaryFile(const std::string& path, int fd, const std::string& name,
                       std::string_view data, Durability durability);
// Renames `name` over `path`; on failure removes `name` and throws FileError.
void ReplaceWithTemporaryFile(const std::string& path, const std::string& name);
// "dir/" of "dir/base" ("" for a bare name) and "base"; throws FileError for an empty path or a
// path that ends in '/'.
void SplitFileName(const std::string& path, std::string* dir, std::string* base);
}  // namespace detail

}  // namespace heaprec::base
