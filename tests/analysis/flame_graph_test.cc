// The flame graph's call tree (analysis/flame_graph.h): node values, callee order, recursion,
// inlined frames, merged lines, unsymbolized names and intervals, on a known native profile and on
// a Ruby front end profile.
#include "analysis/flame_graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "flame_profile.h"
#include "profile/sampling_error.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::test_support::flame;  // NOLINT: the profile with a known call tree

std::vector<int64_t> Values(const FlameNode& n) { return n.values; }

TEST(FlameGraphTest, RootIsTheTotalOfEverySampleType) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(kPeriod));
  ASSERT_EQ(g.sample_types.size(), 4u);
  EXPECT_TRUE(g.header.sampled());
  EXPECT_EQ(g.header.period, kPeriod);
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

TEST(FlameGraphTest, SamplesWithoutLocationsCountAtTheRootOnly) {
  Profile p = MakeKnownProfile(kPeriod);
  p.samples = {MakeSample({}, 1, 1, 10), MakeSample({3}, 2, 2, 10)};
  FlameGraph g = BuildFlameGraph(p);
  EXPECT_EQ(g.root().values[kInuseSpace], 30);
  ASSERT_EQ(g.root().children.size(), 1u);
  EXPECT_EQ(g.nodes[g.root().children[0]].values[kInuseSpace], 20);
}

// A Ruby front end profile (test_support::MakeRubyProfile): frames without mappings or addresses,
// two sample types, per-object sampling.
TEST(RubyFlameGraphTest, FramesCarryRubyNamesFilesAndLines) {
  constexpr int64_t kEvery = 100;
  enum { kObjects, kSpace };
  FlameGraph g = BuildFlameGraph(test_support::MakeRubyProfile(kEvery));
  ASSERT_EQ(g.sample_types.size(), 2u);
  EXPECT_TRUE(g.header.sampled());
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
  FlameGraph exact = BuildFlameGraph(test_support::MakeRubyProfile(1));
  EXPECT_FALSE(exact.header.sampled());
  for (const FlameNode& n : exact.nodes) {
    for (double v : n.variances) EXPECT_EQ(v, 0.0) << n.name;
  }
}

}  // namespace
}  // namespace heaprec::analysis
