// Folded stacks (render/folded.h), read back: each line parsed as the consumers parse it (the
// frames split at ';', the value the last space-separated field) must give the profile's own
// stacks, root first, with values that add up to the report's total; a difference profile's two
// columns; the names made safe for the format; and the errors before any output.
#include "render/folded.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/diff.h"
#include "analysis/profile_view.h"
#include "analysis/report.h"
#include "analysis/stack_reports.h"
#include "diff_profiles.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;

// One parsed line: the frames, root first, and the values after them (one, or BASE's and NEW's).
struct FoldedLine {
  std::vector<std::string> frames;
  std::vector<int64_t> values;
};

// Parses `text` as lines of `columns` values each, failing the test on a line that does not parse.
std::vector<FoldedLine> ParseFolded(const std::string& text, size_t columns) {
  std::vector<FoldedLine> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    FoldedLine parsed;
    std::string stack = line;
    for (size_t c = 0; c < columns; ++c) {
      size_t space = stack.rfind(' ');
      EXPECT_NE(space, std::string::npos) << line;
      if (space == std::string::npos) return lines;
      std::string value = stack.substr(space + 1);
      EXPECT_FALSE(value.empty()) << line;
      EXPECT_EQ(value.find_first_not_of("0123456789"), std::string::npos) << line;
      parsed.values.insert(parsed.values.begin(), std::stoll(value));
      stack.resize(space);
    }
    for (size_t start = 0;;) {
      size_t end = stack.find(';', start);
      parsed.frames.push_back(stack.substr(start, end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    lines.push_back(std::move(parsed));
  }
  return lines;
}

std::string Fold(const Profile& p, const std::string& sample_index = "",
                 const analysis::ViewOptions& view = {}) {
  std::ostringstream out;
  PrintFolded(analysis::ComputeStackReports(p, sample_index, view), out);
  return out.str();
}

// Frames as the profile names them: full names, no frame skipped.
analysis::ViewOptions AsRecorded() {
  analysis::ViewOptions view;
  view.sites = analysis::SiteRule::WithoutDefaults();
  view.full_names = true;
  return view;
}

// The profile's stacks read straight from its samples, root first: each location's lines from the
// outermost (the function the code belongs to) to the innermost inlined one, an unsymbolized
// location as "ADDRESS (MAPPING)"; with the sum of `index`'s values of the samples that have them.
std::map<std::vector<std::string>, int64_t> ProfileStacks(const Profile& p, size_t index) {
  std::map<uint64_t, std::string> functions;
  for (const Function& f : p.functions) functions[f.id] = f.name;
  std::map<uint64_t, std::string> mappings;
  for (const Mapping& m : p.mappings) mappings[m.id] = analysis::BaseName(m.filename);
  std::map<uint64_t, std::vector<std::string>> locations;  // leaf first
  for (const Location& l : p.locations) {
    std::vector<std::string>& frames = locations[l.id];
    for (const Line& line : l.lines) frames.push_back(functions.at(line.function_id));
    if (l.lines.empty()) {
      frames.push_back(analysis::HexAddress(l.address) + " (" + mappings.at(l.mapping_id) + ")");
    }
  }
  std::map<std::vector<std::string>, int64_t> stacks;
  for (const Sample& s : p.samples) {
    std::vector<std::string> stack;
    for (auto it = s.location_ids.rbegin(); it != s.location_ids.rend(); ++it) {
      const std::vector<std::string>& frames = locations.at(*it);
      stack.insert(stack.end(), frames.rbegin(), frames.rend());
    }
    stacks[stack] += s.values.at(index);
  }
  for (auto it = stacks.begin(); it != stacks.end();) {
    it = it->second == 0 ? stacks.erase(it) : std::next(it);
  }
  return stacks;
}

void ExpectReadsBackAsTheProfile(const Profile& p, const std::string& sample_index) {
  SCOPED_TRACE(sample_index);
  std::string text = Fold(p, sample_index, AsRecorded());
  std::map<std::vector<std::string>, int64_t> read;
  int64_t sum = 0;
  for (const FoldedLine& line : ParseFolded(text, 1)) {
    EXPECT_EQ(read.count(line.frames), 0u) << "one line per stack:\n" << text;
    read[line.frames] = line.values[0];
    sum += line.values[0];
  }
  EXPECT_EQ(sum, analysis::ComputeReport(p, sample_index).total) << text;
  EXPECT_EQ(read, ProfileStacks(p, analysis::SelectSampleIndex(p, sample_index))) << text;
}

TEST(FoldedTest, ReportProfileLines) {
  // Inlined ns::Inner is its own frame above ns::Build; the recursive sample is main;main. Short
  // names by default.
  EXPECT_EQ(Fold(test_support::MakeReportProfile()),
            "main;ns::Build;ns::Inner;Alloc 3145728\n"
            "main;ns::Build;ns::Inner 1048576\n"
            "main;0x1234 (libfoo.so) 524288\n"
            "main;main 524288\n");
}

TEST(FoldedTest, ReadsBackAsTheProfileInEverySampleType) {
  for (const char* index : {"", "inuse_objects", "alloc_space", "alloc_objects"}) {
    ExpectReadsBackAsTheProfile(test_support::MakeReportProfile(), index);
  }
}

TEST(FoldedTest, RubyProfileReadsBack) {
  // Stacks A and D differ only in their objects' class: one line.
  EXPECT_EQ(Fold(test_support::MakeRubyProfile()),
            "<main> 100000\n"
            "<main>;Cache#fill;Integer#times;block in Cache#fill 16000\n"
            "<main>;Cache#fill 12000\n");
  ExpectReadsBackAsTheProfile(test_support::MakeRubyProfile(), "inuse_objects");
}

TEST(FoldedTest, DifferenceHasBaseAndNewColumns) {
  using namespace ::heaprec::test_support::diff;
  Profile difference = analysis::MakeDiffProfile(ExactBase(), ExactNew());
  std::string text = Fold(difference);
  // By the size of the change.
  EXPECT_EQ(text,
            "main;Build;Alloc 100000 300000\n"
            "main;Build 40000 20000\n"
            "main;Old 10000 0\n"
            "main;New 0 7000\n"
            "main;Alloc 0 3000\n");
  int64_t base = 0, next = 0;
  for (const FoldedLine& line : ParseFolded(text, 2)) {
    base += line.values[0];
    next += line.values[1];
  }
  EXPECT_EQ(base, analysis::ComputeReport(ExactBase(), "").total);
  EXPECT_EQ(next, analysis::ComputeReport(ExactNew(), "").total);
  EXPECT_EQ(next - base, analysis::ComputeReport(difference, "").total);
}

TEST(FoldedTest, NamesCannotBreakTheFormat) {
  EXPECT_EQ(FoldedFrameName("a;b\nc\td\001e\177"), "a:b c d e ");
  EXPECT_EQ(FoldedFrameName("w\xc3\xb6rker \xff!"), "w\xc3\xb6rker \xEF\xBF\xBD!");
  Profile p = test_support::MakeNativeHeapProfile(1);
  p.functions = {{.id = 1, .name = "operator<<;\r\n"}, {.id = 2, .name = "main"}};
  p.locations = {{.id = 1, .lines = {{1, 0}}}, {.id = 2, .lines = {{2, 0}}}};
  p.samples = {{.location_ids = {1, 2}, .values = {1, 10, 1, 10}},
               {.location_ids = {}, .values = {1, 5, 1, 5}}};
  std::string text = Fold(p);
  EXPECT_EQ(text, "main;operator<<:   10\n[unknown] 5\n");
  std::vector<FoldedLine> lines = ParseFolded(text, 1);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].frames, (std::vector<std::string>{"main", "operator<<:  "}));
}

TEST(FoldedTest, NegativeValuesOutsideADifferenceAreAnError) {
  Profile p = test_support::MakeReportProfile();
  p.samples[1].values[3] = -p.samples[1].values[3];
  std::ostringstream out;
  EXPECT_THROW(PrintFolded(analysis::ComputeStackReports(p, ""), out), FoldedValueError);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace heaprec::render
