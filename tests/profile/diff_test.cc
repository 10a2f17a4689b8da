// `heaprec diff`: the known difference of two hand-made profiles per function (cum, flat) and per
// stack, the noise test, text and JSON output, incompatible profiles, and the pprof diff profile
// read back by our reader and by the real pprof.
#include "analysis/diff.h"
#include "render/format.h"
#include "render/utf8.h"
#include "render/diff.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <sstream>

#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "render/output_file.h"
#include "profile/sampling_error.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;  // NOLINT: tests name the model unqualified
using namespace ::heaprec::analysis;  // NOLINT
using namespace ::heaprec::render;  // NOLINT

using testing::ShellQuote;

// Functions (one location each, id = function id): main 1, Build 2, Alloc 3, Old 4, New 5.
enum : uint64_t { kMain = 1, kBuild = 2, kAlloc = 3, kOld = 4, kNew = 5 };

struct Group {
  std::vector<uint64_t> stack;  // leaf first
  int64_t objects;
  int64_t size;
};

Profile MakeProfile(int64_t period, const std::vector<Group>& groups) {
  Profile p = testing::MakeNativeHeapProfile(period);
  p.comments = {"sample_interval=" + std::to_string(period)};
  p.mappings = {{.id = 1, .memory_start = 0x400000, .memory_limit = 0x500000, .filename = "/app"}};
  const char* names[] = {"", "main", "Build", "Alloc", "Old", "New"};
  for (uint64_t id = kMain; id <= kNew; ++id) {
    p.functions.push_back({.id = id,
                           .name = names[id],
                           .system_name = names[id],
                           .filename = "/src/" + std::string(names[id]) + ".cc",
                           .start_line = static_cast<int64_t>(id)});
    p.locations.push_back(
        {.id = id, .mapping_id = 1, .address = 0x400000 + id * 0x10, .lines = {{id, 1}}});
  }
  for (const Group& g : groups) {
    int64_t bytes = g.objects * g.size;
    p.samples.push_back({.location_ids = g.stack,
                         .values = {g.objects, bytes, g.objects, bytes},
                         .labels = {{.key = "bytes", .num = g.size, .num_unit = "bytes"}}});
  }
  return p;
}

// Exact profiles (period 1) with a known difference:
//   stack                 base          new           change
//   Alloc <- Build <- main 100 x 1000   300 x 1000    +200000
//   Build <- main          10 x 4000    5 x 4000      -20000
//   Old <- main            5 x 2000     -             -10000
//   New <- main            -            1 x 7000      +7000
//   Alloc <- main          -            3 x 1000      +3000
Profile ExactBase() {
  return MakeProfile(1, {{{kAlloc, kBuild, kMain}, 100, 1000},
                         {{kBuild, kMain}, 10, 4000},
                         {{kOld, kMain}, 5, 2000}});
}
Profile ExactNew() {
  return MakeProfile(1, {{{kAlloc, kBuild, kMain}, 300, 1000},
                         {{kBuild, kMain}, 5, 4000},
                         {{kNew, kMain}, 1, 7000},
                         {{kAlloc, kMain}, 3, 1000}});
}

std::vector<std::pair<std::string, int64_t>> Changes(const std::vector<DiffFunction>& entries,
                                                     bool cum) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const DiffFunction& f : entries) {
    out.emplace_back(f.row.function, (cum ? f.cum : f.flat).change());
  }
  return out;
}

using Changed = std::vector<std::pair<std::string, int64_t>>;

TEST(DiffTest, KnownDifferenceOfExactProfiles) {
  Diff d = ComputeDiff(ExactBase(), ExactNew(), "");
  EXPECT_EQ(d.sample_type.type, "inuse_space");
  EXPECT_FALSE(d.sampled);
  EXPECT_EQ(d.total.base, 150000);
  EXPECT_EQ(d.total.next, 330000);
  EXPECT_EQ(d.functions, 5u);
  // By |change|, ties (Build and main both +180000) by name.
  EXPECT_EQ(
      Changes(d.by_cum, true),
      (Changed{
          {"Alloc", 203000}, {"Build", 180000}, {"main", 180000}, {"Old", -10000}, {"New", 7000}}));
  EXPECT_EQ(Changes(d.by_flat, false),
            (Changed{{"Alloc", 203000}, {"Build", -20000}, {"Old", -10000}, {"New", 7000}}));
  ASSERT_EQ(d.stacks.size(), 5u);
  std::vector<std::pair<std::string, int64_t>> stacks;
  for (const DiffStack& s : d.stacks) {
    std::string names;
    for (const ReportRow& row : s.frames) names += row.function + ";";
    stacks.emplace_back(names, s.value.change());
  }
  EXPECT_EQ(stacks, (Changed{{"Alloc;Build;main;", 200000},
                             {"Build;main;", -20000},
                             {"Old;main;", -10000},
                             {"New;main;", 7000},
                             {"Alloc;main;", 3000}}));
  // Exact: no noise, every change is real.
  for (const DiffFunction& f : d.by_cum) {
    EXPECT_EQ(f.cum.noise(), 0) << f.row.function;
    EXPECT_EQ(f.cum.significance(), Significance::kSignificant) << f.row.function;
  }
  // Another sample index.
  Diff objects = ComputeDiff(ExactBase(), ExactNew(), "inuse_objects");
  EXPECT_EQ(objects.total.change(), 309 - 115);
}

TEST(DiffTest, NoiseMarking) {
  constexpr int64_t kT = 64 * 1024;
  // Alloc: 650 -> 660 objects of 1000 B, +10000 B: far inside the noise (~560 KB).
  // Build: 80 -> 800 objects of 4000 B, +2.88 MB: far outside it.
  Profile base = MakeProfile(kT, {{{kAlloc, kMain}, 650, 1000}, {{kBuild, kMain}, 80, 4000}});
  Profile next = MakeProfile(kT, {{{kAlloc, kMain}, 660, 1000}, {{kBuild, kMain}, 800, 4000}});
  Diff d = ComputeDiff(base, next, "inuse_space");
  ASSERT_TRUE(d.sampled);
  ASSERT_EQ(d.by_flat.size(), 2u);
  const DiffFunction& build = d.by_flat[0];
  const DiffFunction& alloc = d.by_flat[1];
  ASSERT_EQ(build.row.function, "Build");
  ASSERT_EQ(alloc.row.function, "Alloc");
  auto var = [&](int64_t objects, int64_t size) {
    return ValueVariance("inuse_space", objects * size, size, kT);
  };
  // noise = 1.96·sqrt(Var_base + Var_new).
  EXPECT_NEAR(alloc.flat.noise(), 1.959963984540054 * std::sqrt(var(650, 1000) + var(660, 1000)),
              1e-6);
  EXPECT_NEAR(build.flat.noise(), 1.959963984540054 * std::sqrt(var(80, 4000) + var(800, 4000)),
              1e-6);
  EXPECT_EQ(alloc.flat.significance(), Significance::kNoise);
  EXPECT_EQ(build.flat.significance(), Significance::kSignificant);
  EXPECT_EQ(d.total.significance(), Significance::kSignificant);
  // The boundary: a change just above the noise is significant, one just below is not.
  DiffValue v{.base = 0, .next = 100, .base_variance = 1000, .next_variance = 1602};
  EXPECT_NEAR(v.noise(), 99.977, 0.001);  // 1.96 * sqrt(2602)
  EXPECT_EQ(v.significance(), Significance::kSignificant);
  v.next_variance = 1604;  // 1.96 * sqrt(2604) = 100.02
  EXPECT_EQ(v.significance(), Significance::kNoise);
  v.next_variance = std::nan("");
  EXPECT_EQ(v.significance(), Significance::kUnknown);
}

std::string Print(const Profile& base, const Profile& next, DiffOptions options) {
  std::ostringstream out;
  PrintDiff(base, next, options, out);
  return out.str();
}

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
           "\nFunctions by change in cum (top 3 of 5 changed)\n",
           "      change        base         new  function\n",
           "  +198.2 KiB    97.7 KiB   295.9 KiB  Alloc Alloc.cc:3\n",
           "  +175.8 KiB   136.7 KiB   312.5 KiB  Build Build.cc:2\n",
           "  +175.8 KiB   146.5 KiB   322.3 KiB  main main.cc:1\n",
           "\nFunctions by change in flat (top 3 of 4 changed)\n",
           "   -19.5 KiB    39.1 KiB    19.5 KiB  Build Build.cc:2\n",
           "    -9.8 KiB     9.8 KiB         0 B  Old Old.cc:4\n",
           "\nStacks by change (top 3 of 5 changed; leaf first)\n",
           "      change        base         new  stack\n",
           "  +195.3 KiB    97.7 KiB   293.0 KiB  Alloc Alloc.cc:3\n"
           "                                      Build Build.cc:2\n"
           "                                      main main.cc:1\n"
           "   -19.5 KiB    39.1 KiB    19.5 KiB  Build Build.cc:2\n",
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
           "*   +2.7 MiB  ±905.2 KiB   312.5 KiB     3.1 MiB  Build Build.cc:2\n",
           "    +9.8 KiB  ±558.4 KiB   634.8 KiB   644.5 KiB  Alloc Alloc.cc:3\n",
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
  std::string path = testing::MakeTempDir() + "/diff.json";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(json.c_str(), f);
  fclose(f);
  std::string out;
  int status = testing::RunCommand(
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
      "c=d[\"functions_by_cum\"][0]; s=d[\"stacks\"][0]; "
      "print(c[\"function\"], c[\"base\"], c[\"new\"], c[\"change\"], c[\"significance\"], "
      "[x[\"function\"] for x in s[\"frames\"]], s[\"change\"], d[\"base\"][\"file\"], "
      "d[\"functions_by_flat\"][1][\"change\"])' " +
          ShellQuote(path),
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
  std::ostringstream out;
  EXPECT_THROW(PrintDiff(ExactBase(), other, {}, out), IncompatibleProfilesError);
  EXPECT_EQ(out.str(), "");
  EXPECT_THROW(MakeDiffProfile(ExactBase(), other), IncompatibleProfilesError);
  Profile cpu = ExactNew();
  cpu.period_type = {"cpu", "nanoseconds"};
  EXPECT_THROW(ComputeDiff(ExactBase(), cpu, ""), IncompatibleProfilesError);
  EXPECT_THROW(ComputeDiff(ExactBase(), ExactNew(), "cpu"), UnknownSampleIndexError);
}

TEST(DiffTest, DiffProfileReadsBackAsTheDifference) {
  Profile diff = MakeDiffProfile(ExactBase(), ExactNew());
  Profile back = ReadProfile(EncodeProfile(diff), "diff");
  EXPECT_EQ(back, diff);
  // Equal mappings, functions and locations are merged.
  EXPECT_EQ(back.mappings.size(), 1u);
  EXPECT_EQ(back.functions.size(), 5u);
  EXPECT_EQ(back.locations.size(), 5u);
  ASSERT_EQ(back.samples.size(), 7u);
  // NEW's samples first, as they are; then BASE's, negated and labelled.
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GT(back.samples[i].values[3], 0);
    EXPECT_EQ(back.samples[i].labels.size(), 1u);
  }
  for (size_t i = 4; i < 7; ++i) {
    EXPECT_LT(back.samples[i].values[3], 0);
    ASSERT_EQ(back.samples[i].labels.size(), 2u);
    EXPECT_EQ(back.samples[i].labels[1], (Label{.key = "pprof::base", .str = "true"}));
  }
  EXPECT_EQ(back.samples[4].values, (std::vector<int64_t>{-100, -100000, -100, -100000}));
  // Our report of the diff profile: every function's net value is its change.
  Report r = ComputeReport(back, "inuse_space");
  Diff d = ComputeDiff(ExactBase(), ExactNew(), "inuse_space");
  EXPECT_EQ(r.total, d.total.change());
  for (const DiffFunction& f : d.by_cum) {
    bool found = false;
    for (const ReportRow& row : r.rows) {
      if (row.function != f.row.function) continue;
      found = true;
      EXPECT_EQ(row.cum, f.cum.change()) << row.function;
      EXPECT_EQ(row.flat, f.flat.change()) << row.function;
    }
    EXPECT_TRUE(found) << f.row.function;
  }
}

class DiffToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    base_ = dir_ + "/base.pb.gz";
    next_ = dir_ + "/new.pb.gz";
    WriteProfileFile(ExactBase(), base_);
    WriteProfileFile(ExactNew(), next_);
  }

  int Run(const std::string& tool, const std::string& args, std::string* output) {
    return testing::RunCommand("HOME=" + ShellQuote(dir_) + " PPROF_TMPDIR=" + ShellQuote(dir_) +
                                   " " + ShellQuote(tool) + " " + args,
                               output);
  }

  std::string dir_, base_, next_;
};

TEST_F(DiffToolTest, RealPprofShowsTheDifference) {
  std::string diff = dir_ + "/diff.pb.gz", out;
  ASSERT_EQ(
      Run(HEAPREC_BINARY,
          "diff " + ShellQuote(base_) + " " + ShellQuote(next_) + " -o " + ShellQuote(diff), &out),
      0)
      << out;
  EXPECT_NE(out.find("heaprec diff: wrote " + diff), std::string::npos) << out;
  EXPECT_NE(out.find("+198.2 KiB"), std::string::npos) << out;
  // Read back by our reader.
  EXPECT_EQ(ReadProfileFile(diff), MakeDiffProfile(ExactBase(), ExactNew()));
  // pprof: flat and cum of the difference, percentages of BASE's total (150000 B = 146.48kB).
  ASSERT_EQ(Run(HEAPREC_PPROF, "-top -symbolize=none -sample_index=inuse_space " + ShellQuote(diff),
                &out),
            0)
      << out;
  for (const char* expected :
       {"of 146.48kB total", "  198.24kB 135.33% 135.33%   198.24kB 135.33%  Alloc\n",
        "  -19.53kB 13.33% 122.00%   175.78kB 120.00%  Build\n",
        "   -9.77kB  6.67% 115.33%    -9.77kB  6.67%  Old\n",
        "    6.84kB  4.67% 120.00%     6.84kB  4.67%  New\n",
        "         0     0% 120.00%   175.78kB 120.00%  main\n"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
  // And pprof's own -diff_base of the two files agrees with it.
  std::string reference;
  ASSERT_EQ(Run(HEAPREC_PPROF,
                "-top -symbolize=none -sample_index=inuse_space -diff_base " + ShellQuote(base_) +
                    " " + ShellQuote(next_),
                &reference),
            0)
      << reference;
  auto body = [](const std::string& s) { return s.substr(s.find("      flat")); };
  EXPECT_EQ(body(out), body(reference)) << out << "\n" << reference;
}

TEST_F(DiffToolTest, CommandLineErrors) {
  std::string out;
  Profile other = ExactNew();
  other.sample_types.pop_back();
  for (Sample& s : other.samples) s.values.pop_back();
  std::string other_path = dir_ + "/other.pb.gz";
  WriteProfileFile(other, other_path);
  std::string written = dir_ + "/never.pb.gz";
  EXPECT_EQ(
      Run(HEAPREC_BINARY,
          "diff " + ShellQuote(base_) + " " + ShellQuote(other_path) + " -o " + ShellQuote(written),
          &out),
      1);
  EXPECT_EQ(out,
            "heaprec diff: the profiles are not comparable: BASE has sample types "
            "alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes but "
            "NEW has alloc_objects/count, alloc_space/bytes, inuse_objects/count\n");
  EXPECT_NE(access(written.c_str(), F_OK), 0) << "nothing written on error";
  EXPECT_EQ(Run(HEAPREC_BINARY,
                "diff --sample-index cpu " + ShellQuote(base_) + " " + ShellQuote(next_), &out),
            2);
  EXPECT_NE(out.find("heaprec diff: unknown sample index 'cpu'"), std::string::npos) << out;
  EXPECT_EQ(
      Run(HEAPREC_BINARY, "diff " + ShellQuote(base_) + " " + ShellQuote(dir_ + "/missing"), &out),
      1);
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line: " << out;
  ASSERT_EQ(Run(HEAPREC_BINARY,
                "diff --format json --top 1 " + ShellQuote(base_) + " " + ShellQuote(next_), &out),
            0);
  EXPECT_NE(out.find("\"functions_by_cum\": [\n    {\n      \"function\": \"Alloc\""),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace heaprec::cli
