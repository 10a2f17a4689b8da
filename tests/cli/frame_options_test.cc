// The options that name frames and choose the allocation sites (cli/frame_options.h), as the real
// heaprec executable takes them: `report` on a profile whose stacks go through the allocator, the
// C++ library and the C runtime's start-up (test_support::runtime_stack), by default, with --lines,
// --full-names, --all-frames, --skip-frames and --keep-frames; and invalid patterns, a usage error
// of one line for each command that takes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "heaprec_command_fixture.h"
#include "runtime_stack_profile.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using test_support::ShellQuote;

class FrameOptionsTest : public HeaprecCommandTest {
 protected:
  void SetUp() override {
    HeaprecCommandTest::SetUp();
    profile_ = WriteProfile("heap.pb.gz", test_support::runtime_stack::MakeRuntimeStackProfile());
  }

  // `heaprec report OPTIONS PROFILE`'s rows: the lines after the table's header.
  std::string ReportRows(const std::string& options) {
    std::string out;
    EXPECT_EQ(Heaprec("report --top 0 " + options + " " + ShellQuote(profile_), &out), 0) << out;
    size_t header = out.find("  function\n");
    EXPECT_NE(header, std::string::npos) << out;
    return header == std::string::npos ? out : out.substr(header + 11);
  }

  std::string profile_;
};

TEST_F(FrameOptionsTest, DefaultSitesAreTheUsersFunctionsAtTheirCallLines) {
  EXPECT_EQ(ReportRows(""),
            "    6.0 MiB   92.3%   92.3%    6.0 MiB   92.3%  Store::Put store.cc:12\n"
            "  512.0 KiB    7.7%  100.0%  512.0 KiB    7.7%  malloc\n");
}

TEST_F(FrameOptionsTest, LinesGiveOneRowPerLine) {
  EXPECT_EQ(ReportRows("--lines"),
            "    3.0 MiB   46.2%   46.2%    3.0 MiB   46.2%  Store::Put store.cc:12\n"
            "    2.0 MiB   30.8%   76.9%    2.0 MiB   30.8%  Store::Put store.cc:22\n"
            "    1.0 MiB   15.4%   92.3%    1.0 MiB   15.4%  Store::Put store.cc:14\n"
            "  512.0 KiB    7.7%  100.0%  512.0 KiB    7.7%  malloc\n");
}

TEST_F(FrameOptionsTest, FullNamesKeepOverloadsApartAtTheSameSites) {
  EXPECT_EQ(ReportRows("--full-names"),
            "    4.0 MiB   61.5%   61.5%    4.0 MiB   61.5%  Store::Put(int) store.cc:12\n"
            "    2.0 MiB   30.8%   92.3%    2.0 MiB   30.8%  "
            "Store::Put(std::__cxx11::basic_string<char, std::char_traits<char>, "
            "std::allocator<char> > const&) store.cc:22\n"
            "  512.0 KiB    7.7%  100.0%  512.0 KiB    7.7%  malloc\n");
}

TEST_F(FrameOptionsTest, AllFramesShowTheStacksAsRecorded) {
  std::string rows = ReportRows("--all-frames");
  EXPECT_EQ(rows.rfind("    6.5 MiB  100.0%  100.0%    6.5 MiB  100.0%  malloc\n", 0), 0u) << rows;
  for (const char* row : {"  operator new\n", "  std::vector::_M_realloc_insert vector.tcc:440\n",
                          "  Store::Put store.cc:12\n", "  main main.cc:30\n", "  _start\n"}) {
    EXPECT_NE(rows.find(row), std::string::npos) << row << "\n" << rows;
  }
}

TEST_F(FrameOptionsTest, SkipAndKeepPatterns) {
  // Store::Put skipped too: its caller is the site.
  std::string rows = ReportRows("--skip-frames '^Store::'");
  EXPECT_EQ(rows.rfind("    6.0 MiB   92.3%   92.3%    6.0 MiB   92.3%  main main.cc:30\n", 0), 0u)
      << rows;
  EXPECT_EQ(rows.find("Store::Put"), std::string::npos) << rows;
  // Repeatable, with the defaults still in.
  rows = ReportRows("--skip-frames '^Store::' --skip-frames '^main$'");
  EXPECT_EQ(rows.rfind("    6.5 MiB  100.0%  100.0%    6.5 MiB  100.0%  malloc\n", 0), 0u) << rows;
  // std::vector kept: the samples that go through it are its own.
  rows = ReportRows("--keep-frames '^std::vector::'");
  EXPECT_EQ(rows.rfind("    5.0 MiB   76.9%   76.9%    5.0 MiB   76.9%  "
                       "std::vector::_M_realloc_insert vector.tcc:440\n"
                       "    1.0 MiB   15.4%   92.3%    6.0 MiB   92.3%  Store::Put store.cc:14\n",
                       0),
            0u)
      << rows;
}

TEST_F(FrameOptionsTest, InvalidPatternIsAUsageError) {
  for (const std::string command : {"report --skip-frames '('", "report --keep-frames '[a-'",
                                    "leaks --skip-frames '('", "diff --keep-frames '('"}) {
    std::string out;
    std::string files = " " + ShellQuote(profile_) + " " + ShellQuote(profile_);
    EXPECT_EQ(Heaprec(command + files, &out), 2) << command << "\n" << out;
    const std::string pattern = command.find("[a-") != std::string::npos ? "'[a-'" : "'('";
    EXPECT_NE(out.find(pattern + " is not a valid regular expression"), std::string::npos)
        << command << "\n"
        << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << command << "\n" << out;
  }
}

TEST_F(FrameOptionsTest, HelpListsTheOptions) {
  for (const char* command : {"report", "diff", "leaks"}) {
    std::string out;
    ASSERT_EQ(Heaprec(std::string(command) + " --help", &out), 0) << out;
    for (const char* option :
         {"--skip-frames", "--keep-frames", "--all-frames", "--full-names", "--lines"}) {
      EXPECT_NE(out.find(option), std::string::npos) << command << " " << option << "\n" << out;
    }
  }
}

}  // namespace
}  // namespace heaprec
