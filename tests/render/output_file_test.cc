// Profile files (render/output_file.h): what WriteProfileFile writes reads back as the profile, in
// a 0600 file, and its errors are OutputError. The writer's own guarantees are tests/base's.
#include "render/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;

TEST(WriteFileTest, WritesPrivateReadableFile) {
  std::string dir = test_support::MakeTempDir();
  std::string path = dir + "/heap.pb.gz";
  Profile p = test_support::MakeFullProfile();
  WriteProfileFile(p, path);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadProfileFile(path), p);
}

TEST(WriteFileTest, MissingDirectoryFails) {
  std::string dir = test_support::MakeTempDir();
  std::string path = dir + "/no/such/dir/heap.pb.gz";
  try {
    WriteProfileFile(test_support::MakeFullProfile(), path);
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + path), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace heaprec::render
