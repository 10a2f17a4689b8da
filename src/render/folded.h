// `heaprec report --format folded`: the report's stacks (analysis/stack_reports.h) as folded
// stacks, the text format of Brendan Gregg's flamegraph.pl that inferno and speedscope also read.
// One line per distinct stack: its frames root first, separated by ';', then a space and the
// stack's value, an integer in the sample type's unit (bytes for inuse_space):
//
//   main;Cache::Fill;operator new(unsigned long) 3145728
//
// Frames are named as the report names them (FrameId::DisplayName(): the function's name, an
// unsymbolized frame's address and mapping) with inlined frames expanded, as `pprof -traces` shows
// them. Stacks that read the same merge into one line; a sample without frames is "[unknown]".
// The lines go by decreasing value, then by text. In a name, ';' becomes ':' and control
// characters (a newline would end the line) spaces, and invalid UTF-8 becomes U+FFFD, so that each
// line parses back to its frames (inferno requires UTF-8).
//
// The format has no negative values (flamegraph.pl ignores such a line). A difference profile,
// whose BASE samples are negated and labelled pprof::base=true (`heaprec diff -o`,
// `pprof -diff_base -proto`), comes as one report per side and is written in the format's
// differential form instead, two values per line, BASE's then NEW's, which flamegraph.pl and
// inferno-flamegraph draw as a differential flame graph (red where NEW holds more). Any other
// negative value is an error.
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>

#include "analysis/stack_reports.h"

namespace heaprec::render {

// A profile whose values folded stacks cannot carry (a negative value outside a difference).
class FoldedValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `name` as a folded frame: no ';', no control characters, valid UTF-8.
std::string FoldedFrameName(const std::string& name);

// Prints the folded stacks, each from its allocation site to the root. Throws FoldedValueError
// before printing anything.
void PrintFolded(const analysis::StackReports& stacks, std::ostream& out);

}  // namespace heaprec::render
