// The flame graph's call tree (node values, inlined frames, intervals), its JSON document, the
// page it is written into, and the `heaprec flame` command.
#include "analysis/flame_tree.h"
#include "render/flame_page.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "profile/pprof_writer.h"
#include "render/output_file.h"
#include "profile/sampling_error.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;  // NOLINT: tests name the model unqualified
using namespace ::heaprec::analysis;  // NOLINT
using namespace ::heaprec::render;  // NOLINT

enum Type { kAllocObjects, kAllocSpace, kInuseObjects, kInuseSpace };
constexpr int64_t kPeriod = 524288;

Sample MakeSample(std::vector<uint64_t> locations, int64_t alloc_objects, int64_t inuse_objects,
                  int64_t size) {
  return {.location_ids = std::move(locations),
          .values = {alloc_objects, alloc_objects * size, inuse_objects, inuse_objects * size},
          .labels = {{.key = "bytes", .num = size, .num_unit = "bytes"}}};
}

// main (main.cc:11) calls ns::Build (build.cc:22) into which ns::Inner (inner.h:31) is inlined,
// which calls Alloc (alloc.cc:41, 45). main also calls itself and an unsymbolized 0x1234 in
// libfoo.so. Locations are leaf first, lines innermost first, as in heaprec's profiles.
Profile MakeKnownProfile(int64_t period) {
  Profile p = testing::MakeNativeHeapProfile(period);
  p.mappings = {
      {.id = 1, .memory_start = 0x400000, .memory_limit = 0x500000, .filename = "/opt/app/bin/app"},
      {.id = 2, .memory_start = 0x1000, .memory_limit = 0x2000, .filename = "/usr/lib/libfoo.so"}};
  p.functions = {
      {.id = 1, .name = "main", .filename = "/src/main.cc", .start_line = 10},
      {.id = 2, .name = "ns::Build(int)", .filename = "/src/build.cc", .start_line = 20},
      {.id = 3, .name = "ns::Inner()", .filename = "/src/inner.h", .start_line = 30},
      {.id = 4, .name = "Alloc", .filename = "/src/alloc.cc", .start_line = 40},
  };
  p.locations = {
      {.id = 1, .mapping_id = 1, .address = 0x401000, .lines = {{4, 41}}},
      {.id = 2, .mapping_id = 1, .address = 0x402000, .lines = {{3, 31}, {2, 22}}},
      {.id = 3, .mapping_id = 1, .address = 0x403000, .lines = {{1, 11}}},
      {.id = 4, .mapping_id = 2, .address = 0x1234},
      {.id = 5, .mapping_id = 1, .address = 0x401100, .lines = {{4, 45}}},
      {.id = 6, .address = 0x9999},
  };
  p.samples = {
      MakeSample({1, 2, 3}, 10, 4, 1024),  // main > Build > Inner > Alloc (line 41)
      MakeSample({5, 2, 3}, 6, 6, 512),    // main > Build > Inner > Alloc (line 45)
      MakeSample({2, 3}, 3, 1, 4096),      // main > Build > Inner
      MakeSample({4, 3}, 7, 0, 64),        // main > 0x1234 (libfoo.so): freed
      MakeSample({3, 3}, 2, 2, 100),       // main > main (recursion)
      MakeSample({6}, 1, 1, 8),            // 0x9999, in no mapping
      MakeSample({77, 3}, 5, 5, 16),       // an unknown location id is skipped: main
  };
  return p;
}

std::vector<int64_t> Values(const FlameNode& n) { return n.values; }

TEST(FlameGraphTest, RootIsTheTotalOfEverySampleType) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(kPeriod));
  ASSERT_EQ(g.sample_types.size(), 4u);
  EXPECT_TRUE(g.sampled);
  EXPECT_EQ(g.period, kPeriod);
  EXPECT_EQ(g.root().name, "all");
  int64_t alloc_objects = 10 + 6 + 3 + 7 + 2 + 1 + 5;
  int64_t alloc_space = 10 * 1024 + 6 * 512 + 3 * 4096 + 7 * 64 + 2 * 100 + 8 + 5 * 16;
  int64_t inuse_objects = 4 + 6 + 1 + 0 + 2 + 1 + 5;
  int64_t inuse_space = 4 * 1024 + 6 * 512 + 4096 + 2 * 100 + 8 + 5 * 16;
  EXPECT_EQ(Values(g.root()),
            (std::vector<int64_t>{alloc_objects, alloc_space, inuse_objects, inuse_space}));
  EXPECT_EQ(g.TypeIndex("inuse_space"), kInuseSpace);
  EXPECT_EQ(g.TypeIndex("cpu"), -1);
}

TEST(FlameGraphTest, ChildrenAreCalleesWithSummedValues) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(kPeriod));
  // Under the root: main, and the unsymbolized address in no mapping; sorted by name.
  ASSERT_EQ(g.root().children.size(), 2u);
  EXPECT_EQ(g.nodes[g.root().children[0]].name, "0x9999");
  EXPECT_FALSE(g.nodes[g.root().children[0]].symbolized);
  const FlameNode* main = g.Child(g.root(), "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->file, "/src/main.cc");
  EXPECT_EQ(main->lines, (std::vector<int64_t>{11}));
  EXPECT_EQ(main->values[kInuseSpace], 4 * 1024 + 6 * 512 + 4096 + 2 * 100 + 5 * 16);
  EXPECT_EQ(main->values[kAllocObjects], 10 + 6 + 3 + 7 + 2 + 5);

  // main's callees: the address in libfoo.so, itself, and Build; sorted by name.
  ASSERT_EQ(main->children.size(), 3u);
  EXPECT_EQ(g.nodes[main->children[0]].name, "0x1234 (libfoo.so)");
  EXPECT_EQ(g.nodes[main->children[1]].name, "main");
  EXPECT_EQ(g.nodes[main->children[2]].name, "ns::Build(int)");

  const FlameNode* lib = g.Child(*main, "0x1234 (libfoo.so)");
  ASSERT_NE(lib, nullptr);
  EXPECT_FALSE(lib->symbolized);
  EXPECT_EQ(lib->file, "");
  EXPECT_TRUE(lib->lines.empty());
  EXPECT_EQ(Values(*lib), (std::vector<int64_t>{7, 7 * 64, 0, 0}));

  const FlameNode* recursive = g.Child(*main, "main");
  ASSERT_NE(recursive, nullptr);
  EXPECT_EQ(Values(*recursive), (std::vector<int64_t>{2, 200, 2, 200}));
  EXPECT_TRUE(recursive->children.empty());
}

TEST(FlameGraphTest, InlinedFramesAreExpandedOutermostFirst) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(kPeriod));
  const FlameNode* main = g.Child(g.root(), "main");
  ASSERT_NE(main, nullptr);
  // Location 2 holds [Inner (inlined), Build]: Build is the caller, Inner its callee.
  const FlameNode* build = g.Child(*main, "ns::Build(int)", "/src/build.cc");
  ASSERT_NE(build, nullptr);
  EXPECT_FALSE(build->inlined);
  EXPECT_EQ(build->lines, (std::vector<int64_t>{22}));
  ASSERT_EQ(build->children.size(), 1u);
  const FlameNode* inner = g.Child(*build, "ns::Inner()");
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(inner->inlined);
  EXPECT_EQ(inner->file, "/src/inner.h");
  EXPECT_EQ(inner->lines, (std::vector<int64_t>{31}));
  EXPECT_EQ(Values(*inner), Values(*build));
  EXPECT_EQ(inner->values[kInuseSpace], 4 * 1024 + 6 * 512 + 4096);

  // Two locations of Alloc (lines 41 and 45) are one node with both lines.
  ASSERT_EQ(inner->children.size(), 1u);
  const FlameNode* alloc = g.Child(*inner, "Alloc");
  ASSERT_NE(alloc, nullptr);
  EXPECT_FALSE(alloc->inlined);
  EXPECT_EQ(alloc->lines, (std::vector<int64_t>{41, 45}));
  EXPECT_EQ(Values(*alloc),
            (std::vector<int64_t>{16, 10 * 1024 + 6 * 512, 10, 4 * 1024 + 6 * 512}));
}

TEST(FlameGraphTest, VariancesAddUpPerNode) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(kPeriod));
  const FlameNode* alloc = g.Child(
      *g.Child(*g.Child(*g.Child(g.root(), "main"), "ns::Build(int)"), "ns::Inner()"), "Alloc");
  ASSERT_NE(alloc, nullptr);
  for (int t = 0; t < 4; ++t) {
    const std::string& type = g.sample_types[t].type;
    double expected = ValueVariance(type, MakeSample({}, 10, 4, 1024).values[t], 1024, kPeriod) +
                      ValueVariance(type, MakeSample({}, 6, 6, 512).values[t], 512, kPeriod);
    EXPECT_DOUBLE_EQ(alloc->variances[t], expected) << type;
  }
  // Independently of sampling_error.cc: Var(bytes) = N (w - 1) s², w = 1 / (1 - exp(-(s+1)/T)).
  auto var_bytes = [](double n, double s) {
    double w = 1.0 / (1.0 - std::exp(-(s + 1) / static_cast<double>(kPeriod)));
    return n * (w - 1) * s * s;
  };
  EXPECT_NEAR(alloc->variances[kInuseSpace] / (var_bytes(4, 1024) + var_bytes(6, 512)), 1.0, 1e-9);
  EXPECT_GT(alloc->variances[kInuseSpace], 0.0);
  // A node with no live objects has no in-use variance; the root sums everything.
  const FlameNode* lib = g.Child(*g.Child(g.root(), "main"), "0x1234 (libfoo.so)");
  EXPECT_EQ(lib->variances[kInuseSpace], 0.0);
  EXPECT_GT(lib->variances[kAllocSpace], 0.0);
  double root_sum = 0;
  for (const Sample& s : MakeKnownProfile(kPeriod).samples) {
    root_sum +=
        ValueVariance("alloc_objects", s.values[kAllocObjects], SampleObjectSize(s), kPeriod);
  }
  EXPECT_NEAR(g.root().variances[kAllocObjects] / root_sum, 1.0, 1e-12);
}

TEST(FlameGraphTest, ExactProfilesHaveNoVariance) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(1));
  EXPECT_FALSE(g.sampled);
  for (const FlameNode& n : g.nodes) {
    for (double v : n.variances) EXPECT_EQ(v, 0.0) << n.name;
  }
  std::ostringstream json;
  WriteFlameJson(MakeKnownProfile(1), g, {}, json);
  EXPECT_NE(json.str().find("\"sampled\":false"), std::string::npos);
  EXPECT_EQ(json.str().find("\"low\""), std::string::npos);
  EXPECT_EQ(json.str().find("\"high\""), std::string::npos);
}

TEST(FlameGraphTest, JsonCarriesTypesIntervalsAndEscapes) {
  Profile p = MakeKnownProfile(kPeriod);
  p.functions[0].name = "main<int>";  // '<' must not be able to end the <script> element
  FlameGraph g = BuildFlameGraph(p);
  std::ostringstream out;
  WriteFlameJson(p, g, {.source = "/tmp/</script>.pb.gz", .sample_index = "alloc_space"}, out);
  std::string json = out.str();
  EXPECT_EQ(json.find('<'), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\":\"main\\u003cint>\""), std::string::npos);
  EXPECT_NE(json.find("\"initial\":1,"), std::string::npos);
  EXPECT_NE(json.find("{\"type\":\"alloc_objects\",\"unit\":\"count\",\"pair\":1}"),
            std::string::npos);
  EXPECT_NE(json.find("{\"type\":\"inuse_space\",\"unit\":\"bytes\",\"pair\":2}"),
            std::string::npos);
  EXPECT_NE(json.find("\"inlined\":true"), std::string::npos);
  EXPECT_NE(json.find("\"unsymbolized\":true"), std::string::npos);
  EXPECT_NE(json.find("\"lines\":[41,45]"), std::string::npos);
  // The root's interval of inuse_space, as sampling_error.h computes it.
  Interval ci = Confidence95(static_cast<double>(g.root().values[kInuseSpace]),
                             g.root().variances[kInuseSpace]);
  char high[32];
  std::snprintf(high, sizeof high, "%.6g]", ci.high);
  size_t root_high = json.find("\"high\":[");
  ASSERT_NE(root_high, std::string::npos);
  std::string root_highs = json.substr(root_high, json.find(']', root_high) - root_high + 1);
  EXPECT_NE(root_highs.find(high), std::string::npos) << root_highs << " vs " << high;
  EXPECT_GT(ci.high, static_cast<double>(g.root().values[kInuseSpace]));

  // Default: the profile's default_sample_type; an unknown one is refused, naming the known ones.
  std::ostringstream dflt;
  WriteFlameJson(p, g, {}, dflt);
  EXPECT_NE(dflt.str().find("\"initial\":3,"), std::string::npos);
  std::ostringstream bad;
  try {
    WriteFlameJson(p, g, {.sample_index = "cpu"}, bad);
    FAIL() << "no exception";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_NE(std::string(e.what()).find("inuse_space"), std::string::npos) << e.what();
  }
}

TEST(FlameGraphTest, PageIsSelfContained) {
  Profile p = MakeKnownProfile(kPeriod);
  std::string page = RenderFlamePage(p, {.source = "known.pb.gz"});
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_EQ(page.find("@HEAPREC_"), std::string::npos);  // every marker replaced
  EXPECT_NE(page.find("\"source\":\"known.pb.gz\""), std::string::npos);
  EXPECT_NE(page.find("\"name\":\"ns::Inner()\""), std::string::npos);
  // d3-flame-graph and the d3 modules it needs, inlined; nothing loaded from elsewhere.
  EXPECT_NE(page.find("d3-flame-graph@"), std::string::npos);
  EXPECT_NE(page.find("d3-selection@"), std::string::npos);
  EXPECT_NE(page.find(".d3-flame-graph rect"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  // Exactly one closing tag per script element: the inlined code cannot end one early.
  size_t opened = 0, closed = 0;
  for (size_t at = 0; (at = page.find("<script", at)) != std::string::npos; ++at) ++opened;
  for (size_t at = 0; (at = page.find("</script>", at)) != std::string::npos; ++at) ++closed;
  EXPECT_EQ(opened, 4u);
  EXPECT_EQ(closed, 4u);
}

TEST(FlameGraphTest, SamplesWithoutLocationsCountAtTheRootOnly) {
  Profile p = MakeKnownProfile(kPeriod);
  p.samples = {MakeSample({}, 1, 1, 10), MakeSample({3}, 2, 2, 10)};
  FlameGraph g = BuildFlameGraph(p);
  EXPECT_EQ(g.root().values[kInuseSpace], 30);
  ASSERT_EQ(g.root().children.size(), 1u);
  EXPECT_EQ(g.nodes[g.root().children[0]].values[kInuseSpace], 20);
}

class FlameCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    profile_ = dir_ + "/known.pb.gz";
    Profile p = MakeKnownProfile(kPeriod);
    p.samples.pop_back();  // the reader refuses the sample with a missing location
    WriteProfileFile(p, profile_);
  }
  std::string dir_;
  std::string profile_;
};

TEST_F(FlameCommandTest, WritesThePageBesideTheProfile) {
  std::string output;
  ASSERT_EQ(testing::RunCommand(
                std::string(HEAPREC_BINARY) + " flame " + testing::ShellQuote(profile_), &output),
            0)
      << output;
  EXPECT_NE(output.find("wrote " + dir_ + "/known.html"), std::string::npos) << output;
  std::ifstream in(dir_ + "/known.html");
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("\"name\":\"ns::Build(int)\""), std::string::npos);
}

TEST_F(FlameCommandTest, OutputAndSampleIndexOptions) {
  std::string output;
  std::string out = dir_ + "/x.html";
  ASSERT_EQ(
      testing::RunCommand(std::string(HEAPREC_BINARY) + " flame " + testing::ShellQuote(profile_) +
                              " -o " + testing::ShellQuote(out) + " --sample-index alloc_objects",
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
  EXPECT_EQ(testing::RunCommand(std::string(HEAPREC_BINARY) + " flame " +
                                    testing::ShellQuote(profile_) + " -o " +
                                    testing::ShellQuote(dir_ + "/y.html") + " --sample-index cpu",
                                &output),
            2);
  EXPECT_NE(output.find("heaprec flame: unknown sample index 'cpu'"), std::string::npos) << output;
  EXPECT_EQ(testing::RunCommand(std::string(HEAPREC_BINARY) + " flame " +
                                    testing::ShellQuote(dir_ + "/missing.pb.gz"),
                                &output),
            1);
  EXPECT_NE(output.find("heaprec flame: "), std::string::npos) << output;
  EXPECT_EQ(testing::RunCommand(std::string(HEAPREC_BINARY) + " flame", &output), 2);
}

// A Ruby front end profile (testing::MakeRubyProfile): frames without mappings or addresses, two
// sample types, per-object sampling.
TEST(RubyFlameGraphTest, FramesCarryRubyNamesFilesAndLines) {
  constexpr int64_t kEvery = 100;
  enum { kObjects, kSpace };
  FlameGraph g = BuildFlameGraph(testing::MakeRubyProfile(kEvery));
  ASSERT_EQ(g.sample_types.size(), 2u);
  EXPECT_TRUE(g.sampled);
  EXPECT_EQ(Values(g.root()), (std::vector<int64_t>{700, 128000}));
  ASSERT_EQ(g.root().children.size(), 1u);
  const FlameNode* main = g.Child(g.root(), "<main>", "/app/app.rb");
  ASSERT_NE(main, nullptr);
  EXPECT_TRUE(main->symbolized);
  EXPECT_EQ(main->lines, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(Values(*main), (std::vector<int64_t>{700, 128000}));
  // Cache#fill at line 11 (calling Integer#times) and at line 15 (allocating) is one node.
  const FlameNode* fill = g.Child(*main, "Cache#fill", "/app/lib/cache.rb");
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->lines, (std::vector<int64_t>{11, 15}));
  EXPECT_EQ(Values(*fill), (std::vector<int64_t>{600, 28000}));
  // A method written in C: no file, no line.
  const FlameNode* times = g.Child(*fill, "Integer#times");
  ASSERT_NE(times, nullptr);
  EXPECT_TRUE(times->symbolized);
  EXPECT_EQ(times->file, "");
  EXPECT_TRUE(times->lines.empty());
  const FlameNode* block = g.Child(*times, "block in Cache#fill", "/app/lib/cache.rb");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->lines, (std::vector<int64_t>{12}));
  EXPECT_EQ(Values(*block), (std::vector<int64_t>{400, 16000}));
  EXPECT_TRUE(block->children.empty());

  // Per-object variances: every sampled object weighs exactly 100, whatever its size.
  EXPECT_DOUBLE_EQ(block->variances[kObjects], 400.0 * (kEvery - 1));
  EXPECT_DOUBLE_EQ(block->variances[kSpace], 400.0 * (kEvery - 1) * 40 * 40);
  EXPECT_DOUBLE_EQ(fill->variances[kSpace],
                   400.0 * (kEvery - 1) * 40 * 40 + 200.0 * (kEvery - 1) * 60 * 60);
  EXPECT_DOUBLE_EQ(g.root().variances[kObjects], 700.0 * (kEvery - 1));

  // Exact at sample_every 1.
  FlameGraph exact = BuildFlameGraph(testing::MakeRubyProfile(1));
  EXPECT_FALSE(exact.sampled);
  for (const FlameNode& n : exact.nodes) {
    for (double v : n.variances) EXPECT_EQ(v, 0.0) << n.name;
  }
}

TEST(RubyFlameGraphTest, JsonAndPage) {
  Profile p = testing::MakeRubyProfile(100);
  FlameGraph g = BuildFlameGraph(p);
  std::ostringstream out;
  WriteFlameJson(p, g, {}, out);
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
  WriteFlameJson(MakeKnownProfile(kPeriod), BuildFlameGraph(MakeKnownProfile(kPeriod)), {}, native);
  EXPECT_NE(native.str().find("\"period_unit\":\"bytes\""), std::string::npos);

  // `heaprec flame` on the file; alloc_* is not among its types.
  std::string dir = testing::MakeTempDir();
  WriteProfileFile(p, dir + "/ruby.pb.gz");
  std::string output;
  ASSERT_EQ(testing::RunCommand(
                std::string(HEAPREC_BINARY) + " flame " + testing::ShellQuote(dir + "/ruby.pb.gz"),
                &output),
            0)
      << output;
  std::ifstream in(dir + "/ruby.html");
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("\"name\":\"Cache#fill\""), std::string::npos);
  EXPECT_EQ(testing::RunCommand(std::string(HEAPREC_BINARY) + " flame " +
                                    testing::ShellQuote(dir + "/ruby.pb.gz") +
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
