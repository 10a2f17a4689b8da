// What `heaprec ui` puts in its page (cli/ui_model.h, render/ui_page.h): every profile in process
// and time order, the processes' last profiles merged first when there are several, each profile
// placed on its process's timeline, and a document that is valid JSON with no '<' in it.
#include "cli/ui_model.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "schema/profile_schema.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using profile::Profile;

constexpr int64_t kStartNs = 1'000'000'000'000;

// A native profile of process `pid`, written `ms` after the timeline's start for `reason`.
Profile At(int64_t pid, int64_t ms, const std::string& reason, bool timeline) {
  Profile p = test_support::MakeFullProfile();  // symbolized, with samples
  p.period = 524288;
  p.time_nanos = kStartNs + ms * 1'000'000;
  p.comments = {"heaprec 0.1.0 pid=" + std::to_string(pid) + " reason=" + reason +
                " sample_interval=524288"};
  if (timeline) {
    p.comments.push_back(std::string(schema::kTimelinePrefix) +
                         " start_ns=" + std::to_string(kStartNs) +
                         " interval=524288 peak_ms=100 peak=5000000"
                         " points=0,0,0,0,0;100,5000000,5000000,8000000,9000000");
  }
  return p;
}

std::string Json(const render::UiDocument& d) {
  std::ostringstream out;
  render::WriteUiJson(d, out);
  return out.str();
}

TEST(UiModelTest, OneProcessOpensOnItsFinalProfileEachPlacedOnItsTimeline) {
  std::vector<Profile> profiles = {At(7, 300, "exit", true), At(7, 100, "interval", false),
                                   At(7, 200, "peak", false)};
  render::UiDocument d = BuildUiDocument(profiles, {"c.pb.gz", "a.pb.gz", "b.pb.gz"}, "dir");
  ASSERT_EQ(d.profiles.size(), 3u);
  EXPECT_EQ(d.profiles[0].path, "a.pb.gz");  // by time
  EXPECT_EQ(d.profiles[2].reason, "exit");
  EXPECT_EQ(d.initial, 2u);  // the final profile, not the latest non-final one
  ASSERT_EQ(d.timelines.size(), 1u);
  EXPECT_EQ(d.timelines[0].pid, 7);
  EXPECT_EQ(d.timelines[0].timeline.peak, 5000000);
  std::string out;
  ASSERT_EQ(test_support::ReadJsonWithPython(
                Json(d),
                "print([p[\"t_ms\"] for p in d[\"profiles\"]], d[\"initial\"], "
                "d[\"timelines\"][0][\"points\"][1])",
                &out),
            0);
  EXPECT_EQ(out, "[100, 200, 300] 2 [100, 5000000, 5000000, 8000000, 9000000]\n");
}

TEST(UiModelTest, SeveralProcessesOpenOnTheirLastProfilesMerged) {
  std::vector<Profile> profiles = {At(2, 100, "exit", true), At(1, 50, "interval", false),
                                   At(1, 80, "exit", false)};
  render::UiDocument d = BuildUiDocument(profiles, {"p2.pb.gz", "p1a.pb.gz", "p1b.pb.gz"}, "out");
  ASSERT_EQ(d.profiles.size(), 4u);
  EXPECT_EQ(d.initial, 0u);
  EXPECT_EQ(d.profiles[0].label, "all 2 processes, merged");
  EXPECT_FALSE(d.profiles[0].pid.has_value());
  // The merged view counts each process once: its final profile.
  const int inuse = d.profiles[1].tree.TypeIndex("inuse_space");
  ASSERT_GE(inuse, 0);
  ASSERT_GT(d.profiles[2].tree.root().values[inuse], 0);
  EXPECT_EQ(d.profiles[0].tree.root().values[inuse],
            d.profiles[2].tree.root().values[inuse] + d.profiles[3].tree.root().values[inuse]);
  EXPECT_EQ(d.profiles[1].label, "pid 1, interval (p1a.pb.gz)");
  // Only the process with a timeline is placed on one.
  std::string out;
  ASSERT_EQ(test_support::ReadJsonWithPython(Json(d),
                                             "print([p[\"t_ms\"] for p in d[\"profiles\"]])", &out),
            0);
  EXPECT_EQ(out, "[None, None, None, 100]\n");
}

TEST(UiModelTest, TheDocumentCanSitInAScriptElement) {
  std::vector<Profile> profiles = {At(3, 10, "interval", false), At(3, 20, "exit", false)};
  profiles[0].functions[0].name = "Cache<std::string>::Put";
  render::UiDocument d = BuildUiDocument(profiles, {"x</script>.pb.gz", "y.pb.gz"}, "<dir>");
  d.leaks_json = "{\"series\": [{\"site\": \"Map<int>\"}]}";
  const std::string json = Json(d);
  EXPECT_EQ(json.find('<'), std::string::npos) << json;
  std::string out;
  ASSERT_EQ(
      test_support::ReadJsonWithPython(json, "print(d[\"leaks\"][\"series\"][0][\"site\"])", &out),
      0);
  EXPECT_EQ(out, "Map<int>\n");
}

}  // namespace
}  // namespace heaprec::cli
