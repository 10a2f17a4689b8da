// The diff's text and JSON outputs (render/diff.h), and incompatible profiles refused before any
// output.
#include "render/diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "analysis/diff.h"
#include "diff_profiles.h"
#include "print_to_string.h"
#include "profile/sampling_error.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::analysis;
using namespace ::heaprec::test_support::diff;  // NOLINT: the profiles with a known difference

using test_support::Print;

TEST(DiffTest, TextOutput) {
  DiffOptions options;
  options.base_source = "base.pb.gz";
  options.next_source = "new.pb.gz";
  options.top = 3;
  std::string text = Print(ExactBase(), ExactNew(), options);
  for (const char* expected : {
           "Base: base.pb.gz (exact)\n",
           "New:  new.pb.gz (exact)\n",
           "Sample index: inuse_space (bytes)\n",
           "Total: 146.5 KiB -> 322.3 KiB, change +175.8 KiB\n",
           "Both profiles are exact (sampling interval 1): every change is real\n",
           // main only calls: context, not a row (ReportRow::context).
           "\nFunctions by change in cum (top 3 of 4 changed)\n",
           "      change        base         new  function\n",
           "  +198.2 KiB    97.7 KiB   295.9 KiB  Alloc Alloc.cc:1\n"
           "  +175.8 KiB   136.7 KiB   312.5 KiB  Build Build.cc:1\n"
           "    -9.8 KiB     9.8 KiB         0 B  Old Old.cc:1\n",
           "\nFunctions by change in flat (top 3 of 4 changed)\n",
           "   -19.5 KiB    39.1 KiB    19.5 KiB  Build Build.cc:1\n",
           "    -9.8 KiB     9.8 KiB         0 B  Old Old.cc:1\n",
           "\nStacks by change (top 3 of 5 changed; leaf first)\n",
           "      change        base         new  stack\n",
           "  +195.3 KiB    97.7 KiB   293.0 KiB  Alloc Alloc.cc:1\n"
           "                                      Build Build.cc:1\n"
           "                                      main main.cc:1\n"
           "   -19.5 KiB    39.1 KiB    19.5 KiB  Build Build.cc:1\n",
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
  EXPECT_EQ(text.find("New New.cc"), std::string::npos) << "only the top 3\n" << text;

  constexpr int64_t kT = 64 * 1024;
  Profile base = MakeProfile(kT, {{{kAlloc, kMain}, 650, 1000}, {{kBuild, kMain}, 80, 4000}});
  Profile next = MakeProfile(kT, {{{kAlloc, kMain}, 660, 1000}, {{kBuild, kMain}, 800, 4000}});
  std::string sampled = Print(base, next, {});
  for (const char* expected : {
           "* marks a change larger than sampling noise: |change| > noise = "
           "1.96·sqrt(Var base + Var new)\n",
           "      change       noise        base         new  function\n",
           "Base: (unnamed) (sampling interval 64.0 KiB)\n",
           "Total: 947.3 KiB -> 3.7 MiB, change +2.8 MiB ±1.0 MiB (significant)\n",
           "*   +2.7 MiB  ±905.2 KiB   312.5 KiB     3.1 MiB  Build Build.cc:1\n",
           "    +9.8 KiB  ±558.4 KiB   634.8 KiB   644.5 KiB  Alloc Alloc.cc:1\n",
       }) {
    EXPECT_NE(sampled.find(expected), std::string::npos) << expected << "\n" << sampled;
  }
}

TEST(DiffTest, JsonParsesAndCarriesTheChanges) {
  DiffOptions options;
  options.format = Format::kJson;
  options.base_source = "b.pb.gz";
  options.next_source = "n.pb.gz";
  std::string json = Print(ExactBase(), ExactNew(), options);
  for (const char* expected : {
           "\"confidence\": null",
           "\"total\": {\n    \"base\": 150000,\n    \"new\": 330000,\n    \"change\": 180000,\n"
           "    \"noise\": null,\n    \"significance\": \"significant\"\n  }",
           "\"changed_stacks\": 5",
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }
  std::string out;
  int status = test_support::ReadJsonWithPython(
      json,
      "c=d[\"functions_by_cum\"][0]; s=d[\"stacks\"][0]; "
      "print(c[\"function\"], c[\"base\"], c[\"new\"], c[\"change\"], c[\"significance\"], "
      "[x[\"function\"] for x in s[\"frames\"]], s[\"change\"], d[\"base\"][\"file\"], "
      "d[\"functions_by_flat\"][1][\"change\"])",
      &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out,
            "Alloc 100000 303000 203000 significant ['Alloc', 'Build', 'main'] 200000 b.pb.gz "
            "-20000\n");

  // Sampled: noise and the bounds of each side's total.
  constexpr int64_t kT = 64 * 1024;
  Profile base = MakeProfile(kT, {{{kAlloc, kMain}, 650, 1000}});
  Profile next = MakeProfile(kT, {{{kAlloc, kMain}, 660, 1000}});
  std::string sampled = Print(base, next, options);
  double noise = 1.959963984540054 * std::sqrt(ValueVariance("inuse_space", 650000, 1000, kT) +
                                               ValueVariance("inuse_space", 660000, 1000, kT));
  std::string expected = "\"change\": 10000,\n    \"noise\": " +
                         std::to_string(static_cast<int64_t>(std::ceil(noise))) +
                         ",\n    \"significance\": \"noise\"";
  EXPECT_NE(sampled.find(expected), std::string::npos) << expected << "\n" << sampled;
  EXPECT_NE(sampled.find("\"confidence\": 0.95"), std::string::npos) << sampled;
  EXPECT_NE(sampled.find("\"total_low\": "), std::string::npos) << sampled;
}

TEST(DiffTest, IncompatibleProfilesFailWithOneMessage) {
  Profile other = ExactNew();
  other.sample_types.pop_back();
  for (Sample& s : other.samples) s.values.pop_back();
  try {
    ComputeDiff(ExactBase(), other, "");
    FAIL() << "no error";
  } catch (const IncompatibleProfilesError& e) {
    EXPECT_STREQ(e.what(),
                 "the profiles are not comparable: BASE has sample types alloc_objects/count, "
                 "alloc_space/bytes, inuse_objects/count, inuse_space/bytes but NEW has "
                 "alloc_objects/count, alloc_space/bytes, inuse_objects/count");
  }
  EXPECT_THROW(MakeDiffProfile(ExactBase(), other), IncompatibleProfilesError);
  Profile cpu = ExactNew();
  cpu.period_type = {"cpu", "nanoseconds"};
  EXPECT_THROW(ComputeDiff(ExactBase(), cpu, ""), IncompatibleProfilesError);
  EXPECT_THROW(ComputeDiff(ExactBase(), ExactNew(), "cpu"), UnknownSampleIndexError);
}

}  // namespace
}  // namespace heaprec::render
