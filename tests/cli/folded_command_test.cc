// `heaprec report --format folded`, as the real executable prints it and as a real consumer reads
// it: Brendan Gregg's flamegraph.pl (Debian ships it in libdevel-nytprof-perl) draws the stacks
// with the report's totals, the plain form and a difference's two-column form, ignoring no line.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "analysis/diff.h"
#include "diff_profiles.h"
#include "heaprec_command_fixture.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;
using test_support::ShellQuote;

class FoldedCommandTest : public HeaprecCommandTest {
 protected:
  // Writes `profile`, prints it with `heaprec report --format folded` into FILE.folded and draws
  // that with flamegraph.pl into FILE.svg; returns flamegraph.pl's status, its messages in `err`.
  int FoldAndDraw(const Profile& profile, const std::string& name, std::string* err) {
    std::string path = dir_ + "/" + name;
    WriteProfile(name + ".pb.gz", profile);
    std::string out;
    EXPECT_EQ(
        // In braces: RunCommand sends the command's stderr to `out` after these redirections.
        test_support::RunCommand("{ " + ShellQuote(HEAPREC_BINARY) + " report --format folded " +
                                     ShellQuote(path + ".pb.gz") + " > " +
                                     ShellQuote(path + ".folded") + " 2> " +
                                     ShellQuote(path + ".err") + "; }",
                                 &out),
        0)
        << out;
    // stderr only says what could not be symbolized (the fixture's libfoo.so is nowhere).
    std::istringstream messages(Read(name + ".err"));
    for (std::string line; std::getline(messages, line);) {
      EXPECT_EQ(line.rfind("heaprec report: ", 0), 0u) << line;
      EXPECT_TRUE(line.find("libfoo.so") != std::string::npos ||
                  line.find("is not fully symbolized") != std::string::npos)
          << line;
    }
    return test_support::RunCommand("perl " + ShellQuote(HEAPREC_FLAMEGRAPH) +
                                        " --countname bytes " + ShellQuote(path + ".folded") +
                                        " > " + ShellQuote(path + ".svg"),
                                    err);
  }

  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(FoldedCommandTest, FlamegraphPlDrawsTheReport) {
  std::string err;
  ASSERT_EQ(FoldAndDraw(test_support::MakeReportProfile(), "report", &err), 0) << err;
  EXPECT_EQ(err, "") << "flamegraph.pl ignored lines or warned";
  std::string folded = Read("report.folded");
  EXPECT_EQ(std::count(folded.begin(), folded.end(), '\n'), 4) << folded;
  EXPECT_EQ(folded.rfind("main;ns::Build;ns::Inner;Alloc 3145728\n", 0), 0u) << folded;
  // flamegraph.pl's frames: the whole (5 MiB), main holding everything, Alloc 60%.
  std::string svg = Read("report.svg");
  for (const char* title : {"<title>all (5,242,880 bytes, 100%)</title>",
                            "<title>main (5,242,880 bytes, 100.00%)</title>",
                            "<title>Alloc (3,145,728 bytes, 60.00%)</title>",
                            "<title>0x1234 (libfoo.so) (524,288 bytes, 10.00%)</title>"}) {
    EXPECT_NE(svg.find(title), std::string::npos) << title << "\n" << folded;
  }
}

TEST_F(FoldedCommandTest, FlamegraphPlDrawsADifference) {
  using namespace ::heaprec::test_support::diff;
  std::string err;
  ASSERT_EQ(FoldAndDraw(analysis::MakeDiffProfile(ExactBase(), ExactNew()), "diff", &err), 0)
      << err;
  EXPECT_EQ(err, "") << "flamegraph.pl ignored lines or warned";
  std::string folded = Read("diff.folded");
  EXPECT_EQ(folded.rfind("main;Build;Alloc 100000 300000\n", 0), 0u) << folded;
  // A differential graph: NEW's widths (330,000 bytes in all), each frame with the change of what
  // it holds itself, in percent of the total: Alloc under Build +200,000, Build -20,000.
  std::string svg = Read("diff.svg");
  for (const char* title : {"<title>all (330,000 bytes, 100%)</title>",
                            "<title>Alloc (300,000 bytes, 90.91%; +60.61%)</title>",
                            "<title>Build (320,000 bytes, 96.97%; -6.06%)</title>"}) {
    EXPECT_NE(svg.find(title), std::string::npos) << title << "\n" << folded;
  }
}

TEST_F(FoldedCommandTest, NegativeValuesAreAOneLineError) {
  Profile p = test_support::MakeReportProfile();
  p.samples[0].values[3] = -p.samples[0].values[3];
  std::string path = WriteProfile("negative.pb.gz", p);
  std::string out;
  EXPECT_EQ(Heaprec("report --format folded " + ShellQuote(path), &out), 1);
  // After the lines about libfoo.so, which is nowhere to symbolize from.
  EXPECT_NE(out.find("\nheaprec report: folded stacks cannot hold negative values (-3145728 at "
                     "main;ns::Build;ns::Inner;Alloc)"),
            std::string::npos)
      << out;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("heaprec report: ", 0), 0u) << "nothing printed but messages\n" << out;
  }
}

}  // namespace
}  // namespace heaprec
