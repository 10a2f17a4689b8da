// The search for a binary's files (symbolize/file_search.h) on the symbolizer's test programs:
// pprof's binary-path layouts, the build-id check at every step, a debug file found by its
// .gnu_debuglink CRC when there is no build id; and what the Symbolizer reports of binaries it
// could not resolve, and how symbolized a profile is (symbolize/coverage.h).
#include "symbolize/file_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "symbolize/coverage.h"
#include "symbolize/elf_file.h"
#include "symbolize/symbolizer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

namespace fs = std::filesystem;
using namespace ::heaprec::symbolize;

bool Has(const std::vector<std::string>& places, const std::string& place) {
  return std::find(places.begin(), places.end(), place) != places.end();
}

bool HasPrefix(const std::vector<std::string>& places, const std::string& prefix) {
  return std::any_of(places.begin(), places.end(),
                     [&](const std::string& p) { return p.rfind(prefix, 0) == 0; });
}

class FileSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = test_support::MakeTempDir();
    build_id_ = ReadElfBuildId(SYMBOLIZE_TARGET);
    ASSERT_EQ(build_id_.size(), 40u);
  }
  FoundFiles Find(const std::string& path, const std::string& build_id, const SearchPaths& paths) {
    return FindFiles(path, build_id, paths, no_server_);
  }
  std::string Place(const std::string& relative, const std::string& source = SYMBOLIZE_TARGET) {
    std::string path = root_ + "/" + relative;
    fs::create_directories(fs::path(path).parent_path());
    fs::copy_file(source, path);
    return path;
  }

  std::string root_, build_id_;
  DebuginfodClient no_server_{""};
};

TEST_F(FileSearchTest, RecordedPathWithItsBuildIdAndDwarfIsAllThatIsNeeded) {
  FoundFiles found = Find(SYMBOLIZE_TARGET, build_id_, {});
  EXPECT_EQ(found.binary, SYMBOLIZE_TARGET);
  EXPECT_EQ(found.debug, "");
  EXPECT_TRUE(found.looked_in.empty());
}

TEST_F(FileSearchTest, BinaryPathLayoutsOfPprof) {
  const std::string gone = "/opt/app/bin/server";
  // DIR/<build-id>/<any name>
  std::string any_name = Place("a/" + build_id_ + "/renamed");
  EXPECT_EQ(Find(gone, build_id_, {.binary_paths = {root_ + "/a"}}).binary, any_name);
  // DIR/<path>/<build-id>, perf's layout
  std::string perf = Place("b/opt/app/bin/server/" + build_id_);
  EXPECT_EQ(Find(gone, build_id_, {.binary_paths = {root_ + "/b/"}}).binary, perf);
  // DIR/<name>, and DIR/<path>; DIR/<build-id>/<name> first
  std::string by_name = Place("c/server");
  std::string by_path = Place("d/opt/app/bin/server");
  EXPECT_EQ(Find(gone, build_id_, {.binary_paths = {root_ + "/c"}}).binary, by_name);
  EXPECT_EQ(Find(gone, build_id_, {.binary_paths = {root_ + "/d"}}).binary, by_path);
  std::string preferred = Place("c/" + build_id_ + "/server");
  EXPECT_EQ(Find(gone, build_id_, {.binary_paths = {root_ + "/c"}}).binary, preferred);
  // The recorded path first, the directories in their order.
  EXPECT_EQ(Find(SYMBOLIZE_TARGET, build_id_, {.binary_paths = {root_ + "/c"}}).binary,
            SYMBOLIZE_TARGET);
  EXPECT_EQ(Find(gone, build_id_, {.binary_paths = {root_ + "/d", root_ + "/c"}}).binary, by_path);
}

TEST_F(FileSearchTest, AnotherBuildIsRefusedAtEveryStep) {
  // The nopie program is another build (another build id) of "the same" binary.
  std::string other = Place("bin/server", SYMBOLIZE_TARGET_NOPIE);
  Place("debug/.build-id/" + build_id_.substr(0, 2) + "/" + build_id_.substr(2) + ".debug",
        SYMBOLIZE_TARGET_NOPIE_DEBUG);
  FoundFiles found = Find(other, build_id_, {.debug_paths = {root_ + "/debug"}});
  EXPECT_EQ(found.binary, "");
  EXPECT_EQ(found.debug, "");
  EXPECT_TRUE(found.other_build);
  EXPECT_TRUE(HasPrefix(found.looked_in, other + " (another build: ")) << found.looked_in[0];
  EXPECT_TRUE(HasPrefix(found.looked_in, root_ + "/debug/.build-id/")) << found.looked_in.back();
  // Without a recorded build id, any ELF file at the path is taken.
  EXPECT_EQ(Find(other, "", {}).binary, other);
}

TEST_F(FileSearchTest, DeletedFileWithoutBuildIdIsNotTrusted) {
  FoundFiles found = Find(std::string(SYMBOLIZE_TARGET) + " (deleted)", "", {});
  EXPECT_EQ(found.binary, "");
  ASSERT_EQ(found.looked_in.size(), 1u);
  EXPECT_NE(found.looked_in[0].find("(deleted, and no build id"), std::string::npos);
  EXPECT_EQ(Find(std::string(SYMBOLIZE_TARGET) + " (deleted)", build_id_, {}).binary,
            SYMBOLIZE_TARGET);
}

TEST_F(FileSearchTest, MissingEverywhereNamesEachPlaceOnce) {
  FoundFiles found = Find(
      "/opt/app/bin/server", build_id_,
      {.binary_paths = {root_ + "/x", root_ + "/y"}, .debug_paths = {root_ + "/z", root_ + "/z"}});
  EXPECT_EQ(found.looked_in, (std::vector<std::string>{
                                 "/opt/app/bin/server", "binary path " + root_ + "/x",
                                 "binary path " + root_ + "/y", "debug path " + root_ + "/z"}));
  EXPECT_FALSE(found.other_build);
}

// A stripped binary without a build id (symbolize_target_noid): its debug file is found by the
// name its .gnu_debuglink gives, and taken only with the CRC it records.
TEST_F(FileSearchTest, DebuglinkCrcWithoutBuildId) {
  ASSERT_EQ(ReadElfBuildId(SYMBOLIZE_TARGET_NOID_STRIPPED), "");
  std::string binary = Place("bin/noid", SYMBOLIZE_TARGET_NOID_STRIPPED);
  std::string debug = Place("bin/.debug/symbolize_target_noid.debug", SYMBOLIZE_TARGET_NOID_DEBUG);
  FoundFiles found = Find(binary, "", {});
  EXPECT_EQ(found.binary, binary);
  EXPECT_EQ(found.debug, debug);

  std::ofstream(debug, std::ios::app) << "x";  // no longer the file the binary was linked with
  found = Find(binary, "", {});
  EXPECT_EQ(found.debug, "");
  EXPECT_TRUE(Has(found.looked_in, debug + " (not the binary's .gnu_debuglink CRC)"));
}

TEST_F(FileSearchTest, StrippedBinaryGetsItsDebugFileFromADebugPath) {
  std::string binary = Place("bin/noid", SYMBOLIZE_TARGET_NOID_STRIPPED);
  // DIR/<the binary's directory>/<debuglink name>
  std::string debug =
      Place("debug" + root_ + "/bin/symbolize_target_noid.debug", SYMBOLIZE_TARGET_NOID_DEBUG);
  FoundFiles found = Find(binary, "", {.debug_paths = {root_ + "/debug"}});
  EXPECT_EQ(found.debug, debug);
}

TEST(SymbolizerUnresolvedTest, NamesEachBinaryNotFoundOnceWithWhereItWasLooked) {
  profile::Profile p;
  p.mappings = {
      {.id = 1,
       .memory_start = 0x1000,
       .memory_limit = 0x2000,
       .filename = "/nonexistent/libgone.so",
       .build_id = "0011223344556677"},
      {.id = 2, .memory_start = 0x7fff0000, .memory_limit = 0x7fff1000, .filename = "[vdso]"}};
  p.locations = {{.id = 1, .mapping_id = 1, .address = 0x1100},
                 {.id = 2, .mapping_id = 1, .address = 0x1200},
                 {.id = 3, .mapping_id = 2, .address = 0x7fff0100}};
  SymbolizeOptions options;
  options.binary_paths = {"/nonexistent/bin"};
  options.debug_paths = {"/nonexistent/debug"};
  Symbolizer symbolizer(options);
  profile::Profile copy = p;
  symbolizer.Symbolize(p);
  symbolizer.Symbolize(copy);
  std::vector<UnresolvedBinary> unresolved = symbolizer.Unresolved();
  ASSERT_EQ(unresolved.size(), 1u) << "[vdso] is no binary to look for";
  EXPECT_EQ(unresolved[0].reason, UnresolvedBinary::Reason::kNotFound);
  EXPECT_EQ(unresolved[0].path, "/nonexistent/libgone.so");
  EXPECT_EQ(unresolved[0].build_id, "0011223344556677");
  EXPECT_EQ(unresolved[0].locations, 4u);  // two in each profile
  EXPECT_EQ(unresolved[0].looked_in,
            (std::vector<std::string>{"/nonexistent/libgone.so", "binary path /nonexistent/bin",
                                      "debug path /nonexistent/debug"}));
}

TEST(CoverageTest, CountsLocationsWithoutAFunctionName) {
  profile::Profile p;
  p.functions = {{.id = 1, .name = "f"}, {.id = 2, .name = ""}};
  p.locations = {{.id = 1, .lines = {{.function_id = 1, .line = 3}}},
                 {.id = 2, .lines = {{.function_id = 2, .line = 4}}},  // a line, but no name
                 {.id = 3, .address = 0x1234},
                 {.id = 4, .lines = {{.function_id = 2}, {.function_id = 1}}}};  // inlined
  Coverage coverage = MeasureCoverage(p);
  EXPECT_EQ(coverage.locations, 4u);
  EXPECT_EQ(coverage.unnamed, 2u);
  EXPECT_FALSE(coverage.complete());
  EXPECT_TRUE(MeasureCoverage(test_support::MakeRubyProfile()).complete());
}

}  // namespace
}  // namespace heaprec
