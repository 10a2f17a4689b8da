// The atomic file writer (render/output_file.h) on profiles: permissions, replacement, and no
// leftovers on failure.
#include "render/output_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(WriteFileTest, WritesPrivateReadableFile) {
  std::string dir = testing::MakeTempDir();
  std::string path = dir + "/heap.pb.gz";
  Profile p = testing::MakeFullProfile();
  WriteProfileFile(p, path);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadProfileFile(path), p);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"heap.pb.gz"});
}

TEST(WriteFileTest, ReplacesExistingFile) {
  std::string dir = testing::MakeTempDir();
  std::string path = dir + "/heap.pb.gz";
  std::ofstream(path) << "old contents";
  Profile p = testing::MakeFullProfile();
  WriteProfileFile(p, path);
  EXPECT_EQ(ReadProfileFile(path), p);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"heap.pb.gz"});
}

TEST(WriteFileTest, RelativePath) {
  std::string dir = testing::MakeTempDir();
  char old_cwd[4096];
  ASSERT_NE(getcwd(old_cwd, sizeof old_cwd), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  WriteProfileFile(testing::MakeFullProfile(), "rel.pb.gz");
  EXPECT_EQ(ReadProfileFile("rel.pb.gz"), testing::MakeFullProfile());
  ASSERT_EQ(chdir(old_cwd), 0);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"rel.pb.gz"});
}

TEST(WriteFileTest, MissingDirectoryFails) {
  std::string dir = testing::MakeTempDir();
  std::string path = dir + "/no/such/dir/heap.pb.gz";
  try {
    WriteProfileFile(testing::MakeFullProfile(), path);
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(ListDir(dir).empty());
}

TEST(WriteFileTest, TargetIsADirectoryLeavesNoTemporaryFile) {
  std::string dir = testing::MakeTempDir();
  ASSERT_EQ(mkdir((dir + "/taken").c_str(), 0700), 0);
  EXPECT_THROW(WriteProfileFile(testing::MakeFullProfile(), dir + "/taken"), OutputError);
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"taken"});
}

}  // namespace
}  // namespace heaprec::render
