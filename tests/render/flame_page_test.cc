// The flame graph's JSON document and the page it is written into (render/flame_page.h): types,
// pairs, intervals and `<` escaping; no markers left, nothing loaded from elsewhere, four script
// elements.
#include "render/flame_page.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "analysis/flame_graph.h"
#include "flame_profile.h"
#include "profile/sampling_error.h"
#include "schema/profile_schema.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::analysis;
using namespace ::heaprec::test_support::flame;  // NOLINT: the profile with a known call tree

TEST(FlameGraphTest, ExactProfilesHaveNoVariance) {
  FlameGraph g = BuildFlameGraph(MakeKnownProfile(1));
  EXPECT_FALSE(g.header.sampled());
  for (const FlameNode& n : g.nodes) {
    for (double v : n.variances) EXPECT_EQ(v, 0.0) << n.name;
  }
  std::ostringstream json;
  WriteFlameJson(g, {}, json);
  EXPECT_NE(json.str().find("\"sampled\":false"), std::string::npos);
  EXPECT_EQ(json.str().find("\"low\""), std::string::npos);
  EXPECT_EQ(json.str().find("\"high\""), std::string::npos);
}

TEST(FlameGraphTest, JsonCarriesTypesIntervalsAndEscapes) {
  Profile p = MakeKnownProfile(kPeriod);
  p.functions[0].name = "main<int>";  // '<' must not be able to end the <script> element
  FlameGraph g = BuildFlameGraph(p, "alloc_space");
  std::ostringstream out;
  WriteFlameJson(g, {.source = "/tmp/</script>.pb.gz"}, out);
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
  WriteFlameJson(BuildFlameGraph(p), {}, dflt);
  EXPECT_NE(dflt.str().find("\"initial\":3,"), std::string::npos);
  try {
    BuildFlameGraph(p, "cpu");
    FAIL() << "no exception";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_NE(std::string(e.what()).find("inuse_space"), std::string::npos) << e.what();
  }
}

// A Ruby profile with native bytes: objects sampled 1 in N, native blocks by bytes at the
// interval their label gives. The page's header names both.
TEST(FlameGraphTest, JsonNamesBothIntervalsOfARubyProfileWithNativeBytes) {
  Profile p = MakeKnownProfile(1000);
  p.period_type = {.type = schema::kPerObjectPeriodType, .unit = schema::kCountUnit};
  std::ostringstream objects_only;
  WriteFlameJson(BuildFlameGraph(p), {}, objects_only);
  EXPECT_NE(objects_only.str().find("\"period\":1000,\"period_unit\":\"objects\""),
            std::string::npos);
  EXPECT_EQ(objects_only.str().find("native_byte_interval"), std::string::npos);
  p.samples[0].labels.push_back({.key = schema::kByteIntervalLabel, .num = 524288});
  std::ostringstream with_native;
  WriteFlameJson(BuildFlameGraph(p), {}, with_native);
  EXPECT_NE(with_native.str().find("\"period_unit\":\"objects\",\"native_byte_interval\":524288"),
            std::string::npos)
      << with_native.str().substr(0, 200);
}

// A profile of an attached process: the pages' header says, as the summary does, that only
// allocations since the attach are counted and what the heap held then.
TEST(FlameGraphTest, JsonSaysWhatAnAttachedProcessesProfileLeavesOut) {
  Profile p = MakeKnownProfile(kPeriod);
  std::ostringstream plain;
  WriteFlameJson(BuildFlameGraph(p), {}, plain);
  EXPECT_EQ(plain.str().find("\"attached\""), std::string::npos);
  p.comments.push_back(
      "attached=1 attached_at=1796655779 injected=1 held_at_attach=329194720 "
      "held_walked=329061760 held_by_size=11:321671280:300049");
  std::ostringstream attached;
  WriteFlameJson(BuildFlameGraph(p), {}, attached);
  EXPECT_NE(attached.str().find("\"attached\":\"Attached 2026-12-07 15:02:59 UTC: only "
                                "allocations since are counted below; the heap held 313.9 MiB "
                                "then: 306.8 MiB in 1-2 KiB blocks (98%, 300049 blocks)\""),
            std::string::npos)
      << attached.str().substr(0, 400);
}

TEST(FlameGraphTest, PageIsSelfContained) {
  Profile p = MakeKnownProfile(kPeriod);
  std::string page = RenderFlamePage(BuildFlameGraph(p), {.source = "known.pb.gz"});
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

}  // namespace
}  // namespace heaprec::render
