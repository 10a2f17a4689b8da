// Our files must be valid for the reference tool: the real pprof (built from Debian's sources)
// reads them and reports the same functions and totals.
#include <gtest/gtest.h>

#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

class PprofCompatTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_support::MakeTempDir(); }

  // Runs pprof with a private HOME and PPROF_TMPDIR, and without its own symbolization.
  int Pprof(const std::string& args, std::string* output) {
    return test_support::RunCommand("HOME=" + test_support::ShellQuote(dir_) +
                                        " PPROF_TMPDIR=" + test_support::ShellQuote(dir_) + " " +
                                        test_support::ShellQuote(HEAPREC_PPROF) +
                                        " -symbolize=none " + args,
                                    output);
  }

  std::string dir_;
};

TEST_F(PprofCompatTest, RawShowsSampleTypesAndComments) {
  std::string path = dir_ + "/full.pb.gz";
  test_support::WriteEncodedProfile(test_support::MakeFullProfile(), path);
  std::string out;
  ASSERT_EQ(Pprof("-raw " + test_support::ShellQuote(path), &out), 0) << out;
  EXPECT_NE(out.find("alloc_objects/count alloc_space/bytes inuse_objects/count "
                     "inuse_space/bytes[dflt]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("sample_interval=524288"), std::string::npos) << out;
  EXPECT_NE(out.find("ns::Widget::Build(int)"), std::string::npos) << out;
}

TEST_F(PprofCompatTest, TopListsFunctionsAndTotals) {
  std::string path = dir_ + "/report.pb.gz";
  test_support::WriteEncodedProfile(test_support::MakeReportProfile(), path);
  std::string out;
  ASSERT_EQ(Pprof("-top -sample_index=inuse_space " + test_support::ShellQuote(path), &out), 0)
      << out;
  EXPECT_NE(out.find("of 5120kB total"), std::string::npos) << out;
  // The same flat/cum figures as `heaprec report` (see tests/analysis/report_test.cc).
  for (const char* expected : {"3072kB 60.00% 60.00%     3072kB 60.00%  Alloc\n",
                               "1024kB 20.00% 80.00%     4096kB 80.00%  ns::Inner() (inline)\n",
                               "512kB 10.00%   100%     5120kB   100%  main\n",
                               "0     0%   100%     4096kB 80.00%  ns::Build(int)\n"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
}

// The object age label, in nanoseconds as the preload library writes it, reads as a duration.
TEST_F(PprofCompatTest, TagsShowTheAgeAsADuration) {
  Profile p = test_support::MakeReportProfile();
  p.samples[0].labels = {{.key = "age_ns", .num = 1500000000, .num_unit = "nanoseconds"}};
  p.samples[1].labels = {{.key = "age_ns", .num = 2000000, .num_unit = "nanoseconds"}};
  std::string path = dir_ + "/ages.pb.gz";
  test_support::WriteEncodedProfile(p, path);
  std::string out;
  ASSERT_EQ(Pprof("-tags -sample_index=inuse_space " + test_support::ShellQuote(path), &out), 0)
      << out;
  EXPECT_NE(out.find(" age_ns: Total 4.0MB\n"), std::string::npos) << out;
  EXPECT_NE(out.find("3.0MB (75.00%): 1.50s\n"), std::string::npos) << out;
  EXPECT_NE(out.find("1.0MB (25.00%): 2ms\n"), std::string::npos) << out;
}

TEST_F(PprofCompatTest, RawProtobufIsAccepted) {
  std::string path = dir_ + "/raw.pb";
  std::string bytes = EncodeProfile(test_support::MakeReportProfile(), /*gzip=*/false);
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  fwrite(bytes.data(), 1, bytes.size(), f);
  fclose(f);
  std::string out;
  ASSERT_EQ(Pprof("-top -sample_index=alloc_objects " + test_support::ShellQuote(path), &out), 0)
      << out;
  EXPECT_NE(out.find("of 13 total"), std::string::npos) << out;
}

}  // namespace
}  // namespace heaprec
