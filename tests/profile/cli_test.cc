// The heaprec executable's report and symbolize subcommands: output, exit codes and messages.
#include <gtest/gtest.h>

#include <algorithm>

#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using testing::ShellQuote;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    profile_ = dir_ + "/heap.pb.gz";
    WriteProfileFile(testing::MakeReportProfile(), profile_);
  }

  int Heaprec(const std::string& args, std::string* output) {
    return testing::RunCommand(ShellQuote(HEAPREC_BINARY) + " " + args, output);
  }

  std::string dir_;
  std::string profile_;
};

TEST_F(CliTest, ReportText) {
  std::string out;
  ASSERT_EQ(Heaprec("report " + ShellQuote(profile_), &out), 0) << out;
  EXPECT_NE(out.find("Total: 5.0 MiB in 4 samples"), std::string::npos) << out;
  EXPECT_NE(out.find("Alloc alloc.cc:40"), std::string::npos) << out;
}

TEST_F(CliTest, ReportJsonTopAndSampleIndex) {
  std::string out;
  ASSERT_EQ(
      Heaprec("report --format json --top 1 --sample-index alloc_objects " + ShellQuote(profile_),
              &out),
      0)
      << out;
  EXPECT_NE(out.find("\"sample_index\": \"alloc_objects\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"total\": 13"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"function\": \"Alloc\""), std::string::npos) << "only the top row" << out;
  EXPECT_NE(out.find("\"function\": \"0x1234\""), std::string::npos) << out;
}

TEST_F(CliTest, UnknownSampleIndexIsAUsageError) {
  std::string out;
  EXPECT_EQ(Heaprec("report --sample-index cpu " + ShellQuote(profile_), &out), 2);
  EXPECT_NE(out.find("heaprec report: unknown sample index 'cpu'; this profile has: "
                     "alloc_objects, alloc_space, inuse_objects, inuse_space"),
            std::string::npos)
      << out;
}

TEST_F(CliTest, BadFileIsAOneLineFailure) {
  std::string bad = dir_ + "/bad.pb.gz";
  FILE* f = fopen(bad.c_str(), "w");
  fputs("not a profile", f);
  fclose(f);
  for (const char* command : {"report ", "symbolize "}) {
    std::string out;
    EXPECT_EQ(Heaprec(command + ShellQuote(bad), &out), 1) << command;
    EXPECT_NE(out.find(bad + ": not a gzip or pprof file"), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  std::string out;
  EXPECT_EQ(Heaprec("report " + ShellQuote(dir_ + "/missing.pb.gz"), &out), 1) << out;
  EXPECT_NE(out.find("cannot open"), std::string::npos) << out;
}

TEST_F(CliTest, SymbolizeToOutputKeepsInputAndSummarizes) {
  std::string out_path = dir_ + "/out.pb.gz";
  std::string out;
  ASSERT_EQ(Heaprec("symbolize " + ShellQuote(profile_) + " -o " + ShellQuote(out_path), &out), 0)
      << out;
  // Three locations already have lines; the fourth is in a library that does not exist here.
  EXPECT_EQ(out, "symbolized 3 of 4 locations; 1 without a readable binary\n");
  EXPECT_EQ(ReadProfileFile(out_path), testing::MakeReportProfile());
  EXPECT_EQ(ReadProfileFile(profile_), testing::MakeReportProfile());
}

TEST_F(CliTest, HelpDescribesOptions) {
  std::string out;
  EXPECT_EQ(Heaprec("report --help", &out), 0);
  EXPECT_NE(out.find("--sample-index"), std::string::npos) << out;
  EXPECT_EQ(Heaprec("symbolize --help", &out), 0);
  EXPECT_NE(out.find("--output"), std::string::npos) << out;
}

}  // namespace
}  // namespace heaprec
