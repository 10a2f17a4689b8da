// profile/merge.h: many profiles as one. Samples of one stack and the same labels are summed,
// whatever addresses their code was loaded at; samples that differ in a label stay apart; the
// sampling error of the merged profile is the sum of the inputs'; profiles of other sample types
// or sampling intervals are refused with both names.
#include "profile/merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profile/sampling_error.h"
#include "schema/profile_schema.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

constexpr int64_t kPeriod = 512 * 1024;

// A native heap profile of one process: `libapp.so` loaded at `base`, function `name` (app.cc) at
// base + 0x100, and `count` objects of `size` bytes allocated there (inuse_objects, inuse_space of
// the test profile's four types: alloc_* 0). Symbolized unless `symbolized` is false.
Profile OneSiteProfile(uint64_t base, const std::string& name, int64_t count, int64_t size, int pid,
                       bool symbolized = true) {
  Profile p = test_support::MakeNativeHeapProfile(kPeriod);
  p.mappings.push_back({.id = 7,
                        .memory_start = base,
                        .memory_limit = base + 0x10000,
                        .file_offset = 0,
                        .filename = "/opt/app/libapp.so",
                        .build_id = "abcd"});
  if (symbolized) {
    p.functions.push_back({.id = 3, .name = name, .system_name = name, .filename = "app.cc"});
    p.locations.push_back({.id = 5,
                           .mapping_id = 7,
                           .address = base + 0x100,
                           .lines = {{.function_id = 3, .line = 42}}});
  } else {
    p.locations.push_back({.id = 5, .mapping_id = 7, .address = base + 0x100});
  }
  std::vector<int64_t> values(p.sample_types.size(), 0);
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == schema::kInuseObjects) values[i] = count;
    if (p.sample_types[i].type == schema::kInuseSpace) values[i] = count * size;
  }
  p.samples.push_back({.location_ids = {5},
                       .values = values,
                       .labels = {{.key = schema::kBytesLabel, .num = size}}});
  p.comments = {"pid=" + std::to_string(pid) +
                " reason=exit sample_interval=" + std::to_string(kPeriod)};
  p.time_nanos = 1'000'000'000LL * pid;
  p.duration_nanos = 1'000'000'000;
  return p;
}

int64_t Value(const Profile& p, const Sample& s, const std::string& type) {
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == type) return s.values[i];
  }
  ADD_FAILURE() << "no " << type;
  return 0;
}

double TotalVariance(const Profile& p, const std::string& type) {
  SamplingModel model(p);
  size_t index = 0;
  while (p.sample_types[index].type != type) ++index;
  double variance = 0;
  for (const Sample& s : p.samples) {
    variance += ValueVariance(type, s.values[index], SampleObjectSize(s), model);
  }
  return variance;
}

TEST(MergeProfilesTest, OneProfileIsReturnedUnchanged) {
  Profile p = test_support::MakeReportProfile();
  EXPECT_EQ(MergeProfiles({p}), p);
}

TEST(MergeProfilesTest, TheSameStackLoadedAtOtherAddressesIsOneSampleWithTheSums) {
  // Two processes of one program, the library at other addresses (ASLR).
  Profile merged = MergeProfiles({OneSiteProfile(0x7f0000000000, "Cache::Fill", 10, 1000, 11),
                                  OneSiteProfile(0x7f1000000000, "Cache::Fill", 5, 1000, 12)},
                                 {"a.pb.gz", "b.pb.gz"});
  ASSERT_EQ(merged.samples.size(), 1u);
  EXPECT_EQ(Value(merged, merged.samples[0], schema::kInuseObjects), 15);
  EXPECT_EQ(Value(merged, merged.samples[0], schema::kInuseSpace), 15000);
  EXPECT_EQ(SampleObjectSize(merged.samples[0]), 1000);  // the label is kept
  EXPECT_EQ(merged.locations.size(), 1u);
  EXPECT_EQ(merged.functions.size(), 1u);
  // The location keeps a mapping that holds its address, so pprof can still show it.
  ASSERT_EQ(merged.mappings.size(), 2u);
  const Location& loc = merged.locations[0];
  const Mapping& m = merged.mappings[loc.mapping_id - 1];
  EXPECT_EQ(m.id, loc.mapping_id);
  EXPECT_GE(loc.address, m.memory_start);
  EXPECT_LT(loc.address, m.memory_limit);
  EXPECT_EQ(merged.period, kPeriod);
  // pid and reason differ: left out; what all share stays, after the count.
  EXPECT_EQ(merged.comments, std::vector<std::string>{"merged=2 reason=exit sample_interval=" +
                                                      std::to_string(kPeriod)});
  // From the first start to the last end.
  EXPECT_EQ(merged.time_nanos, 11'000'000'000LL);
  EXPECT_EQ(merged.duration_nanos, 2'000'000'000LL);
}

// A timeline is one process's: the fields it shares with another process's are not the whole's.
TEST(MergeProfilesTest, TimelinesAreNotMergedIntoTheComments) {
  Profile a = OneSiteProfile(0x7f0000000000, "Cache::Fill", 10, 1000, 11);
  Profile b = OneSiteProfile(0x7f1000000000, "Cache::Fill", 5, 1000, 12);
  for (Profile* p : {&a, &b}) {
    p->comments.push_back(std::string(schema::kTimelinePrefix) +
                          " start_ns=1 interval=524288 peak_ms=0 peak=0 points=0,0,0,0,0");
  }
  Profile merged = MergeProfiles({a, b}, {"a.pb.gz", "b.pb.gz"});
  EXPECT_EQ(merged.comments, std::vector<std::string>{"merged=2 reason=exit sample_interval=" +
                                                      std::to_string(kPeriod)});
}

TEST(MergeProfilesTest, UnsymbolizedAddressesMatchByTheirOffsetInTheFile) {
  // Another offset in the file: another location, another sample.
  Profile other = OneSiteProfile(0x7f2000000000, "", 4, 64, 3, false);
  other.locations[0].address += 0x10;
  Profile merged = MergeProfiles({OneSiteProfile(0x7f0000000000, "", 10, 64, 1, false),
                                  OneSiteProfile(0x7f1000000000, "", 3, 64, 2, false), other});
  ASSERT_EQ(merged.samples.size(), 2u);
  EXPECT_EQ(Value(merged, merged.samples[0], schema::kInuseObjects), 13);
  EXPECT_EQ(Value(merged, merged.samples[1], schema::kInuseObjects), 4);
  EXPECT_EQ(merged.locations.size(), 2u);
}

TEST(MergeProfilesTest, OtherFunctionsAndOtherLabelsStayApart) {
  Profile a = OneSiteProfile(0x1000, "Cache::Fill", 10, 1000, 1);
  Profile b = OneSiteProfile(0x1000, "Log::Append", 5, 1000, 2);
  Profile c = OneSiteProfile(0x1000, "Cache::Fill", 7, 2000, 3);  // other object size
  Profile merged = MergeProfiles({a, b, c});
  ASSERT_EQ(merged.samples.size(), 3u);
  EXPECT_EQ(merged.functions.size(), 2u);
  int64_t total = 0;
  for (const Sample& s : merged.samples) total += Value(merged, s, schema::kInuseSpace);
  EXPECT_EQ(total, 10 * 1000 + 5 * 1000 + 7 * 2000);
}

TEST(MergeProfilesTest, TheMergedVarianceIsTheSumOfTheInputs) {
  std::vector<Profile> inputs = {OneSiteProfile(0x1000, "Cache::Fill", 10, 300, 1),
                                 OneSiteProfile(0x2000, "Cache::Fill", 20, 300, 2),
                                 OneSiteProfile(0x1000, "Log::Append", 30, 100, 3)};
  double sum = 0;
  for (const Profile& p : inputs) sum += TotalVariance(p, schema::kInuseSpace);
  ASSERT_GT(sum, 0);
  Profile merged = MergeProfiles(inputs);
  EXPECT_NEAR(TotalVariance(merged, schema::kInuseSpace), sum, sum * 1e-12);
}

TEST(MergeProfilesTest, OtherSampleTypesAreRefusedNamingBothFiles) {
  Profile heap = OneSiteProfile(0x1000, "f", 1, 10, 1);
  try {
    MergeProfiles({heap, test_support::MakeGoCpuProfile()}, {"heap.pb.gz", "cpu.pb.gz"});
    FAIL() << "merged a CPU profile into a heap profile";
  } catch (const ProfileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("heap.pb.gz"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu.pb.gz"), std::string::npos) << what;
    EXPECT_NE(what.find("sample types"), std::string::npos) << what;
  }
}

TEST(MergeProfilesTest, OtherSamplingIntervalsAreRefused) {
  Profile a = OneSiteProfile(0x1000, "f", 1, 10, 1);
  Profile b = OneSiteProfile(0x1000, "f", 1, 10, 2);
  b.period = 4096;
  try {
    MergeProfiles({a, a, b}, {"a.pb.gz", "a2.pb.gz", "b.pb.gz"});
    FAIL() << "merged profiles of two sampling intervals";
  } catch (const ProfileError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("a.pb.gz and b.pb.gz"), std::string::npos) << what;
    EXPECT_NE(what.find("4096"), std::string::npos) << what;
  }
  // Exact profiles (period 0 or 1) are all exact: they merge.
  Profile e1 = a, e2 = b;
  e1.period = 0;
  e2.period = 1;
  EXPECT_NO_THROW(MergeProfiles({e1, e2}));
  // Per object (Ruby) and per byte at the same number: two models.
  Profile ruby = test_support::MakeRubyProfile(kPeriod);
  EXPECT_THROW(CheckMergeable({test_support::MakeRubyProfile(100), ruby}, {}), ProfileError);
}

TEST(MergeProfilesTest, NoProfilesIsAnError) { EXPECT_THROW(MergeProfiles({}), ProfileError); }

}  // namespace
}  // namespace heaprec
