// `heaprec diff` run as the executable: the diff profile it writes, read back by our reader and
// by the real pprof (against pprof's own -diff_base), and its errors and exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include "analysis/diff.h"
#include "diff_profiles.h"
#include "heaprec_command_fixture.h"
#include "profile/pprof_reader.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::test_support::diff;  // NOLINT: the profiles with a known difference
using analysis::MakeDiffProfile;

using test_support::ShellQuote;

class DiffToolTest : public HeaprecCommandTest {
 protected:
  void SetUp() override {
    HeaprecCommandTest::SetUp();
    base_ = WriteProfile("base.pb.gz", ExactBase());
    next_ = WriteProfile("new.pb.gz", ExactNew());
  }

  int Run(const std::string& tool, const std::string& args, std::string* output) {
    return test_support::RunCommand("HOME=" + ShellQuote(dir_) + " PPROF_TMPDIR=" +
                                        ShellQuote(dir_) + " " + ShellQuote(tool) + " " + args,
                                    output);
  }

  std::string base_, next_;
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
  std::string other_path = WriteProfile("other.pb.gz", other);
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
