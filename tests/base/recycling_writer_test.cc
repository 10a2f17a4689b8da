// The writer that replaces files without freeing their inodes (base/recycling_writer.h): each write
// is WriteFileAtomically's (content, 0600, old file kept on failure), the replaced file's inode
// fills the next write, a spare is never filled while it has another name or is not a plain file,
// and the spares go with the writer.
#include "base/recycling_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "file_helpers.h"

namespace heaprec::base {
namespace {

ino_t Inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

// The names in `dir` that are spares.
std::vector<std::string> SpareNames(const std::string& dir) {
  std::vector<std::string> spares;
  for (const std::string& name : List(dir)) {
    if (name.rfind(".heaprec-spare.", 0) == 0) spares.push_back(name);
  }
  return spares;
}

// Every guarantee holds whichever way the writer sends the data to the disk (durability_test.cc
// tests that way).
class RecyclingWriterTest : public ::testing::TestWithParam<Durability> {};

const char* NameOf(Durability durability) {
  return durability == Durability::kSyncedBeforeRename ? "SyncedBeforeRename" : "WritebackStarted";
}

}  // namespace

// How gtest prints a parameter (found by argument-dependent lookup, so in Durability's namespace).
void PrintTo(Durability durability, std::ostream* out) { *out << NameOf(durability); }

namespace {

INSTANTIATE_TEST_SUITE_P(EachDurability, RecyclingWriterTest,
                         ::testing::Values(Durability::kSyncedBeforeRename,
                                           Durability::kWritebackStarted),
                         [](const ::testing::TestParamInfo<Durability>& info) {
                           return std::string(NameOf(info.param));
                         });

TEST_P(RecyclingWriterTest, TheReplacedFilesInodeHoldsTheNextFile) {
  TempDir dir;
  Plant(dir / "a", "a as written by the program");
  Plant(dir / "b", "b as written by the program");
  ino_t a_before = Inode(dir / "a");
  {
    RecyclingWriter writer{GetParam()};
    writer.Write(dir / "a", "a rewritten");
    EXPECT_NE(Inode(dir / "a"), a_before) << "a new inode: the old one is still a's until renamed";
    ASSERT_EQ(SpareNames(dir.path()).size(), 1u);
    EXPECT_EQ(Inode(dir / SpareNames(dir.path())[0]), a_before) << "a's old inode, kept";

    ino_t b_before = Inode(dir / "b");
    writer.Write(dir / "b", "b rewritten");
    EXPECT_EQ(Inode(dir / "b"), a_before) << "b is written into a's old inode";
    ASSERT_EQ(SpareNames(dir.path()).size(), 1u) << "one spare for one writer at a time";
    EXPECT_EQ(Inode(dir / SpareNames(dir.path())[0]), b_before);

    EXPECT_EQ(Contents(dir / "a"), "a rewritten");
    EXPECT_EQ(Contents(dir / "b"), "b rewritten");
    EXPECT_EQ(Mode(dir / "b") & 07777, 0600u);
  }
  EXPECT_EQ(List(dir.path()), (std::vector<std::string>{"a", "b"})) << "the spares go with it";
}

// A spare is emptied before it is filled: a longer old file leaves nothing of itself behind.
TEST_P(RecyclingWriterTest, AFilledSpareHoldsOnlyTheNewContent) {
  TempDir dir;
  Plant(dir / "a", std::string(100000, 'a'));
  Plant(dir / "b", "b");
  RecyclingWriter writer{GetParam()};
  writer.Write(dir / "a", "short");
  writer.Write(dir / "b", "new b");
  EXPECT_EQ(Contents(dir / "b"), "new b");
}

TEST_P(RecyclingWriterTest, ASpareIsPrivateWhateverTheOldFilesMode) {
  TempDir dir;
  Plant(dir / "a", "a");
  ASSERT_EQ(chmod((dir / "a").c_str(), 0644), 0);
  Plant(dir / "b", "b");
  RecyclingWriter writer{GetParam()};
  writer.Write(dir / "a", "new a");
  writer.Write(dir / "b", "new b");
  EXPECT_EQ(Mode(dir / "b") & 07777, 0600u);
}

// A file written where there was none has nothing to keep.
TEST_P(RecyclingWriterTest, ANewFileKeepsNoSpare) {
  TempDir dir;
  RecyclingWriter writer{GetParam()};
  writer.Write(dir / "new", "text");
  EXPECT_EQ(Contents(dir / "new"), "text");
  EXPECT_TRUE(writer.Spares().empty());
  EXPECT_EQ(List(dir.path()), std::vector<std::string>{"new"});
}

// The user hard-linked a profile elsewhere: the old inode is that copy too, and is never written.
TEST_P(RecyclingWriterTest, AnOldFileWithAnotherNameIsNeverFilled) {
  TempDir dir;
  Plant(dir / "a", "a as written");
  ASSERT_EQ(link((dir / "a").c_str(), (dir / "a-copy").c_str()), 0);
  Plant(dir / "b", "b as written");
  RecyclingWriter writer{GetParam()};
  writer.Write(dir / "a", "a rewritten");
  writer.Write(dir / "b", "b rewritten");
  EXPECT_EQ(Contents(dir / "a-copy"), "a as written");
  EXPECT_NE(Inode(dir / "b"), Inode(dir / "a-copy"));
  EXPECT_EQ(Contents(dir / "b"), "b rewritten");
  EXPECT_EQ(SpareNames(dir.path()).size(), 1u) << "the unfit spare's name is gone, b's old kept";
}

// Something put at a spare's name meanwhile (a symlink to another file) is not written through.
TEST_P(RecyclingWriterTest, ASpareReplacedByASymlinkIsNotFollowed) {
  TempDir dir;
  Plant(dir / "victim", "victim's contents");
  Plant(dir / "a", "a");
  Plant(dir / "b", "b");
  RecyclingWriter writer{GetParam()};
  writer.Write(dir / "a", "new a");
  std::vector<std::string> spares = writer.Spares();
  ASSERT_EQ(spares.size(), 1u);
  ASSERT_EQ(unlink(spares[0].c_str()), 0);
  ASSERT_EQ(symlink((dir / "victim").c_str(), spares[0].c_str()), 0);
  writer.Write(dir / "b", "new b");
  EXPECT_EQ(Contents(dir / "victim"), "victim's contents");
  EXPECT_EQ(Contents(dir / "b"), "new b");
  EXPECT_TRUE(S_ISREG(Mode(dir / "b")));
}

// A failed write leaves the old file and no temporary, and the spare it would have filled is
// either kept for the next write or gone: never left behind after the writer.
TEST_P(RecyclingWriterTest, AFailedRenameKeepsTheOldFileAndLeavesNothing) {
  TempDir dir;
  Plant(dir / "a", "a");
  ASSERT_EQ(mkdir((dir / "taken").c_str(), 0700), 0);
  Plant(dir / "taken/inside", "kept");
  {
    RecyclingWriter writer{GetParam()};
    writer.Write(dir / "a", "new a");
    FileError error = ErrorOf([&] { writer.Write(dir / "taken", "text"); });
    EXPECT_NE(std::string(error.what()).find(": rename failed: "), std::string::npos)
        << error.what();
    EXPECT_EQ(Contents(dir / "taken/inside"), "kept");
  }
  EXPECT_EQ(List(dir.path()), (std::vector<std::string>{"a", "taken"}));
}

TEST_P(RecyclingWriterTest, ABadNameIsTheAtomicWritersError) {
  RecyclingWriter writer{GetParam()};
  EXPECT_STREQ(ErrorOf([&] { writer.Write("", "text"); }).what(), "cannot write: empty file name");
}

// Writers on several threads, each replacing its own files in one directory: every file ends with
// its own content, and no more spares are kept than writes were under way at once.
TEST_P(RecyclingWriterTest, ConcurrentWritesKeepEveryFileAndFewSpares) {
  TempDir dir;
  constexpr int kThreads = 4, kFiles = 50;
  for (int t = 0; t < kThreads; ++t) {
    for (int f = 0; f < kFiles; ++f) {
      Plant(dir / ("f" + std::to_string(t) + "-" + std::to_string(f)), "unsymbolized");
    }
  }
  {
    RecyclingWriter writer{GetParam()};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int f = 0; f < kFiles; ++f) {
          std::string name = "f" + std::to_string(t) + "-" + std::to_string(f);
          writer.Write(dir / name, "rewritten " + name);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_LE(writer.Spares().size(), static_cast<std::size_t>(kThreads));
    EXPECT_GE(writer.Spares().size(), 1u);
  }
  for (int t = 0; t < kThreads; ++t) {
    for (int f = 0; f < kFiles; ++f) {
      std::string name = "f" + std::to_string(t) + "-" + std::to_string(f);
      EXPECT_EQ(Contents(dir / name), "rewritten " + name);
    }
  }
  EXPECT_TRUE(SpareNames(dir.path()).empty());
  EXPECT_EQ(List(dir.path()).size(), static_cast<std::size_t>(kThreads * kFiles));
}

}  // namespace
}  // namespace heaprec::base
