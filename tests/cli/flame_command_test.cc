// `heaprec flame` run as the executable: where it writes the page, its options, its errors and
// exit codes, on a known native profile and on a Ruby front end profile.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "analysis/flame_graph.h"
#include "flame_profile.h"
#include "heaprec_command_fixture.h"
#include "render/flame_page.h"
#include "render/output_file.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::analysis;
using namespace ::heaprec::render;
using namespace ::heaprec::test_support::flame;  // NOLINT: the profile with a known call tree

class FlameCommandTest : public HeaprecCommandTest {
 protected:
  void SetUp() override {
    HeaprecCommandTest::SetUp();
    Profile p = MakeKnownProfile(kPeriod);
    p.samples.pop_back();  // the reader refuses the sample with a missing location
    profile_ = WriteProfile("known.pb.gz", p);
  }
  std::string profile_;
};

TEST_F(FlameCommandTest, WritesThePageBesideTheProfile) {
  std::string output;
  ASSERT_EQ(Heaprec("flame " + test_support::ShellQuote(profile_), &output), 0) << output;
  EXPECT_NE(output.find("wrote " + dir_ + "/known.html"), std::string::npos) << output;
  std::ifstream in(dir_ + "/known.html");
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("\"name\":\"ns::Build(int)\""), std::string::npos);
}

TEST_F(FlameCommandTest, OutputAndSampleIndexOptions) {
  std::string output;
  std::string out = dir_ + "/x.html";
  ASSERT_EQ(Heaprec("flame " + test_support::ShellQuote(profile_) + " -o " +
                        test_support::ShellQuote(out) + " --sample-index alloc_objects",
                    &output),
            0)
      << output;
  std::ifstream in(out);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("\"initial\":0,"), std::string::npos);
}

TEST_F(FlameCommandTest, Errors) {
  std::string output;
  EXPECT_EQ(Heaprec("flame " + test_support::ShellQuote(profile_) + " -o " +
                        test_support::ShellQuote(dir_ + "/y.html") + " --sample-index cpu",
                    &output),
            2);
  EXPECT_NE(output.find("heaprec flame: unknown sample index 'cpu'"), std::string::npos) << output;
  EXPECT_EQ(Heaprec("flame " + test_support::ShellQuote(dir_ + "/missing.pb.gz"), &output), 1);
  EXPECT_NE(output.find("heaprec flame: "), std::string::npos) << output;
  EXPECT_EQ(Heaprec("flame", &output), 2);
}

TEST(RubyFlameGraphTest, JsonAndPage) {
  Profile p = test_support::MakeRubyProfile(100);
  FlameGraph g = BuildFlameGraph(p);
  std::ostringstream out;
  WriteFlameJson(g, {}, out);
  std::string json = out.str();
  // The page says "sampled every 100 objects"; '<' of "<main>" escaped for the <script> element.
  EXPECT_NE(json.find("\"sampled\":true,\"period\":100,\"period_unit\":\"objects\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"initial\":1,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"types\":[{\"type\":\"inuse_objects\",\"unit\":\"count\",\"pair\":1},"
                      "{\"type\":\"inuse_space\",\"unit\":\"bytes\",\"pair\":0}]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"name\":\"\\u003cmain>\",\"file\":\"/app/app.rb\",\"lines\":[5,7],"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"name\":\"block in Cache#fill\",\"file\":\"/app/lib/cache.rb\","
                      "\"lines\":[12],\"values\":[400,16000]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"name\":\"Integer#times\",\"values\":[400,16000]"), std::string::npos)
      << json;
  EXPECT_EQ(json.find("unsymbolized"), std::string::npos) << json;
  EXPECT_EQ(json.find("0x"), std::string::npos) << json;
  // A native profile keeps its unit.
  std::ostringstream native;
  WriteFlameJson(BuildFlameGraph(MakeKnownProfile(kPeriod)), {}, native);
  EXPECT_NE(native.str().find("\"period_unit\":\"bytes\""), std::string::npos);

  // `heaprec flame` on the file; alloc_* is not among its types.
  std::string dir = test_support::MakeTempDir();
  WriteProfileFile(p, dir + "/ruby.pb.gz");
  std::string output;
  ASSERT_EQ(test_support::RunCommand(std::string(HEAPREC_BINARY) + " flame " +
                                         test_support::ShellQuote(dir + "/ruby.pb.gz"),
                                     &output),
            0)
      << output;
  std::ifstream in(dir + "/ruby.html");
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("\"name\":\"Cache#fill\""), std::string::npos);
  EXPECT_EQ(test_support::RunCommand(std::string(HEAPREC_BINARY) + " flame " +
                                         test_support::ShellQuote(dir + "/ruby.pb.gz") +
                                         " --sample-index alloc_space",
                                     &output),
            2);
  EXPECT_NE(output.find("unknown sample index 'alloc_space'; this profile has: inuse_objects, "
                        "inuse_space"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace heaprec::cli
