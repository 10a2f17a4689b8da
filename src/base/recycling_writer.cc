#include "base/recycling_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace heaprec::base {
namespace {

constexpr int kMaxNameAttempts = 100;
constexpr char kSpareName[] = ".heaprec-spare.";

// Links the file at `path` under a new spare name in `dir` and returns that name; "" when it
// cannot (no file there, a file system without hard links), and the rename frees it as before.
std::string KeepOldFile(const std::string& path, const std::string& dir) {
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    std::string spare = dir + kSpareName + detail::RandomSuffix();
    // link(2) makes a new name or fails: nothing planted under the name is touched.
    if (link(path.c_str(), spare.c_str()) == 0) return spare;
    if (errno != EEXIST) return "";
  }
  return "";
}

}  // namespace

RecyclingWriter::~RecyclingWriter() {
  for (const std::string& spare : Spares()) unlink(spare.c_str());
}

std::vector<std::string> RecyclingWriter::Spares() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> all;
  for (const auto& [dir, names] : spares_) all.insert(all.end(), names.begin(), names.end());
  return all;
}

int RecyclingWriter::TakeSpare(const std::string& dir, std::string* name) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<std::string>& names = spares_[dir];
      if (names.empty()) return -1;
      *name = std::move(names.back());
      names.pop_back();
    }
    // Checked through the descriptor, so that what is checked is what is filled. O_NONBLOCK: a
    // FIFO put at the name fails to open instead of waiting for a reader (regular files ignore it).
    int fd = open(name->c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
        st.st_uid == geteuid() && fchmod(fd, 0600) == 0 && ftruncate(fd, 0) == 0) {
      return fd;
    }
    // Linked elsewhere, or no longer what was kept: only the spare's own name goes.
    if (fd >= 0) close(fd);
    unlink(name->c_str());
  }
}

void RecyclingWriter::Write(const std::string& path, std::string_view data) {
  std::string dir, base;
  detail::SplitFileName(path, &dir, &base);
  std::string temporary;
  int fd = TakeSpare(dir, &temporary);
  if (fd < 0) fd = detail::CreateTemporaryFile(path, detail::RandomSuffix, &temporary);
  detail::FillTemporaryFile(path, fd, temporary, data, durability_);
  std::string spare = KeepOldFile(path, dir);
  try {
    detail::ReplaceWithTemporaryFile(path, temporary);
  } catch (const FileError&) {
    if (!spare.empty()) unlink(spare.c_str());
    throw;
  }
  if (spare.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  spares_[dir].push_back(std::move(spare));
}

}  // namespace heaprec::base
