// The closest-match suggestions of the CLI's errors (cli/suggest.h): what is one edit away is
// suggested, what is far is not.
#include "cli/suggest.h"

#include <gtest/gtest.h>

namespace heaprec::cli {
namespace {

TEST(SuggestTest, EditDistanceCountsSwapsAsOneEdit) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("", "run"), 3u);
  EXPECT_EQ(EditDistance("run", "run"), 0u);
  EXPECT_EQ(EditDistance("rn", "run"), 1u);    // deletion
  EXPECT_EQ(EditDistance("runn", "run"), 1u);  // insertion
  EXPECT_EQ(EditDistance("ran", "run"), 1u);   // substitution
  EXPECT_EQ(EditDistance("tpo", "top"), 1u);   // swap
  EXPECT_EQ(EditDistance("reprot", "report"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("bogus", "top"), 4u);
}

TEST(SuggestTest, SuggestsOnlyWhatIsClose) {
  const std::vector<std::string> commands = {"run",  "report", "symbolize", "flame",
                                             "diff", "leaks",  "help"};
  EXPECT_EQ(ClosestMatch("rn", commands), "run");
  EXPECT_EQ(ClosestMatch("reprot", commands), "report");
  EXPECT_EQ(ClosestMatch("symbolise", commands), "symbolize");
  EXPECT_EQ(ClosestMatch("leak", commands), "leaks");
  EXPECT_EQ(ClosestMatch("bogus", commands), std::nullopt);
  EXPECT_EQ(ClosestMatch("flamegraph", commands), std::nullopt);
  EXPECT_EQ(ClosestMatch("x", commands), std::nullopt);

  const std::vector<std::string> options = {"-h",       "--help", "--sample-index", "--top",
                                            "--format", "-o",     "--output"};
  EXPECT_EQ(ClosestMatch("--tpo", options), "--top");
  EXPECT_EQ(ClosestMatch("-top", options), "--top");  // dashes are not compared
  EXPECT_EQ(ClosestMatch("--sample-indx", options), "--sample-index");
  EXPECT_EQ(ClosestMatch("--formt", options), "--format");
  EXPECT_EQ(ClosestMatch("--bogus", options), std::nullopt);
  EXPECT_EQ(ClosestMatch("-x", options), std::nullopt);  // one letter: no suggestion
  EXPECT_EQ(ClosestMatch("--", options), std::nullopt);
  // Two edits are allowed from 6 characters on, three from 9.
  EXPECT_EQ(ClosestMatch("--sampel-indx", options), "--sample-index");
  EXPECT_EQ(ClosestMatch("--to", options), "--top");
  EXPECT_EQ(ClosestMatch("--t", options), std::nullopt);
}

}  // namespace
}  // namespace heaprec::cli
