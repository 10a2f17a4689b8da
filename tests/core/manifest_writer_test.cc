// The manifest's lines as `heaprec run` reads them (core/manifest_writer.h): pid, reason and path
// separated by tabs, one line per call, appended.
#include "core/manifest_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace heaprec {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ManifestWriterTest, AppendsOneTabSeparatedLinePerCall) {
  std::string path = ::testing::TempDir() + "manifest." + std::to_string(getpid());
  std::ofstream(path).close();  // `heaprec run` creates it empty
  AppendToManifest(path.c_str(), 123, "exit", "/tmp/heap.123.pb.gz");
  AppendToManifest(path.c_str(), 124, "message", "heaprec: something to say");
  EXPECT_EQ(ReadFile(path),
            "123\texit\t/tmp/heap.123.pb.gz\n124\tmessage\theaprec: something to say\n");
  std::remove(path.c_str());
}

TEST(ManifestWriterTest, NeverCreatesTheFile) {
  std::string path = ::testing::TempDir() + "no-manifest." + std::to_string(getpid());
  std::remove(path.c_str());
  AppendToManifest(path.c_str(), 1, "exit", "/tmp/x.pb.gz");
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace heaprec
