// The CLI side's file helpers (base/file_io.h): the atomic writer's guarantees (replacement, mode
// 0600, the old file kept on failure, no temporary left, no symlink followed), ReadFile's errors.
#include "base/file_io.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "file_helpers.h"

namespace heaprec::base {
namespace {

TEST(WriteFileAtomicallyTest, WritesAPrivateFileAndNothingElse) {
  TempDir dir;
  WriteFileAtomically(dir / "out", "new contents");
  EXPECT_EQ(Contents(dir / "out"), "new contents");
  EXPECT_EQ(Mode(dir / "out") & 07777, 0600u);
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"out"});
}

TEST(WriteFileAtomicallyTest, ReplacesAnExistingFileWithAPrivateOne) {
  TempDir dir;
  Plant(dir / "out", "old contents, longer than the new");
  ASSERT_EQ(chmod((dir / "out").c_str(), 0644), 0);
  WriteFileAtomically(dir / "out", "new");
  EXPECT_EQ(Contents(dir / "out"), "new");
  EXPECT_EQ(Mode(dir / "out") & 07777, 0600u) << "a new file, not the old one rewritten";
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"out"});
}

TEST(WriteFileAtomicallyTest, RelativePathWritesInTheCurrentDirectory) {
  TempDir dir;
  std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  WriteFileAtomically("relative", "text");
  std::filesystem::current_path(before);
  EXPECT_EQ(Contents(dir / "relative"), "text");
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"relative"});
}

// A write that fails half-way (the file-size limit, which holds for root too) keeps the old file
// and leaves no temporary.
TEST(WriteFileAtomicallyTest, FailedWriteKeepsTheOldFile) {
  TempDir dir;
  Plant(dir / "out", "old contents");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);  // write(2) fails with EFBIG instead
  FileError error = ErrorOf([&] { WriteFileAtomically(dir / "out", std::string(8192, 'x')); });
  signal(SIGXFSZ, old_handler);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_STREQ(
      error.what(),
      ("cannot write " + (dir / "out") + ": write failed: " + std::strerror(EFBIG)).c_str());
  EXPECT_EQ(error.error_number(), EFBIG);
  EXPECT_EQ(Contents(dir / "out"), "old contents");
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"out"});
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  TempDir dir;
  std::string path = dir / "no/such/dir/out";
  FileError error = ErrorOf([&] { WriteFileAtomically(path, "text"); });
  EXPECT_STREQ(error.what(), ("cannot write " + path + ": cannot create temporary file in " +
                              dir.path() + "/no/such/dir/: " + std::strerror(ENOENT))
                                 .c_str());
  EXPECT_EQ(error.error_number(), ENOENT);
  EXPECT_TRUE(List(dir.path()).empty());
}

TEST(WriteFileAtomicallyTest, DirectoryThatIsAFileIsAnErrorAndKeepsTheFile) {
  TempDir dir;
  Plant(dir / "file", "old contents");
  FileError error = ErrorOf([&] { WriteFileAtomically(dir / "file/out", "text"); });
  EXPECT_EQ(error.error_number(), ENOTDIR) << error.what();
  EXPECT_EQ(Contents(dir / "file"), "old contents");
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"file"});
}

// The temporary file is written in full before the rename fails: it must not stay behind.
TEST(WriteFileAtomicallyTest, FailedRenameLeavesNoTemporary) {
  TempDir dir;
  ASSERT_EQ(mkdir((dir / "taken").c_str(), 0700), 0);
  Plant(dir / "taken/inside", "kept");
  FileError error = ErrorOf([&] { WriteFileAtomically(dir / "taken", "text"); });
  EXPECT_NE(std::string(error.what()).find(": rename failed: "), std::string::npos) << error.what();
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"taken"});
  EXPECT_EQ(Contents(dir / "taken/inside"), "kept");
}

// Symlinks planted at the temporary names the writer tries, one to an existing file and one to a
// file that does not exist yet (which O_CREAT alone would create): neither is opened, and the
// writer goes on to the next name.
TEST(WriteFileAtomicallyTest, NeverFollowsASymlinkAtTheTemporaryName) {
  TempDir dir;
  Plant(dir / "victim", "victim's contents");
  ASSERT_EQ(symlink((dir / "victim").c_str(), (dir / ".out.tmp.existing").c_str()), 0);
  ASSERT_EQ(symlink((dir / "created").c_str(), (dir / ".out.tmp.dangling").c_str()), 0);
  std::vector<std::string> suffixes = {"existing", "dangling", "free"};
  std::size_t next = 0;
  detail::WriteFileAtomically(dir / "out", "text", [&] { return suffixes.at(next++); });
  EXPECT_EQ(next, 3u);
  EXPECT_EQ(Contents(dir / "out"), "text");
  EXPECT_EQ(Contents(dir / "victim"), "victim's contents");
  EXPECT_EQ(List(dir.path()),
            (std::vector<std::string>{".out.tmp.dangling", ".out.tmp.existing", "out", "victim"}))
      << "no file created through the dangling link, no temporary left";
}

TEST(WriteFileAtomicallyTest, EveryTemporaryNameTakenIsAnError) {
  TempDir dir;
  Plant(dir / ".out.tmp.taken", "someone else's");
  FileError error =
      ErrorOf([&] { detail::WriteFileAtomically(dir / "out", "text", [] { return "taken"; }); });
  EXPECT_EQ(error.error_number(), EEXIST) << error.what();
  EXPECT_EQ(Contents(dir / ".out.tmp.taken"), "someone else's");
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{".out.tmp.taken"});
}

// A symlink at `path` itself is replaced by the new file; what it pointed to is not written.
TEST(WriteFileAtomicallyTest, ReplacesASymlinkAtThePathWithoutWritingThroughIt) {
  TempDir dir;
  Plant(dir / "victim", "victim's contents");
  ASSERT_EQ(symlink((dir / "victim").c_str(), (dir / "out").c_str()), 0);
  WriteFileAtomically(dir / "out", "text");
  EXPECT_TRUE(S_ISREG(Mode(dir / "out")));
  EXPECT_EQ(Contents(dir / "out"), "text");
  EXPECT_EQ(Contents(dir / "victim"), "victim's contents");
}

TEST(WriteFileAtomicallyTest, NameWithoutAFileIsAnError) {
  EXPECT_STREQ(ErrorOf([] { WriteFileAtomically("", "text"); }).what(),
               "cannot write: empty file name");
  TempDir dir;
  EXPECT_STREQ(ErrorOf([&] { WriteFileAtomically(dir.path() + "/", "text"); }).what(),
               ("cannot write " + dir.path() + "/: not a file name").c_str());
  EXPECT_TRUE(List(dir.path()).empty());
}

// More than one read's buffer, with NUL bytes: all of it, as it is.
TEST(ReadFileTest, ReadsTheWholeFile) {
  TempDir dir;
  std::string bytes;
  for (int i = 0; i < 200000; ++i) bytes.push_back(static_cast<char>(i % 251));
  Plant(dir / "in", bytes);
  EXPECT_EQ(ReadFile(dir / "in"), bytes);
}

// Files under /proc have a size of 0: they are read to their end.
TEST(ReadFileTest, ReadsAProcFile) {
  EXPECT_NE(ReadFile("/proc/self/status").find("Name:"), std::string::npos);
}

TEST(ReadFileTest, MissingFileIsAnErrorNamingThePath) {
  TempDir dir;
  FileError error = ErrorOf([&] { ReadFile(dir / "missing"); });
  EXPECT_STREQ(error.what(),
               ("cannot open " + (dir / "missing") + ": " + std::strerror(ENOENT)).c_str());
  EXPECT_EQ(error.error_number(), ENOENT);
}

TEST(ReadFileTest, DirectoryIsAnErrorNamingThePath) {
  TempDir dir;
  FileError error = ErrorOf([&] { ReadFile(dir.path()); });
  EXPECT_STREQ(error.what(), ("cannot read " + dir.path() + ": " + std::strerror(EISDIR)).c_str());
  EXPECT_EQ(error.error_number(), EISDIR);
}

}  // namespace
}  // namespace heaprec::base
