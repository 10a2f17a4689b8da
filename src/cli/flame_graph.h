// The call tree behind `heaprec flame`: samples merged by call path, root first, with one value
// and one sampling variance per sample type at every node, and its rendering as a self-contained
// HTML page (d3-flame-graph and d3, inlined; see docs/design/flame-graph.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/report.h"
#include "profile/profile.h"

namespace heaprec::cli {

struct FlameNode {
  // The function's demangled name; for an unsymbolized location "0xADDR (mapping)" (the mapping's
  // base name, omitted when the address is in no known mapping). The root is "all".
  std::string name;
  std::string file;             // the function's source file; "" if unknown
  std::vector<int64_t> lines;   // distinct source lines of this frame on the merged stacks, sorted
  bool inlined = false;         // inlined into its caller on at least one merged stack
  bool symbolized = true;       // false for an address without function information
  std::vector<int64_t> values;  // per Profile::sample_types entry: sum over the merged samples
  std::vector<double> variances;  // per sample type: sum of the samples' ValueVariance (0 if exact)
  std::vector<size_t> children;   // indexes into FlameGraph::nodes, ordered by name then file
};

struct FlameGraph {
  std::vector<ValueType> sample_types;
  bool sampled = false;  // IsSampled(profile): intervals are meaningful
  int64_t period = 0;
  std::vector<FlameNode> nodes;  // nodes[0] is the root

  const FlameNode& root() const { return nodes.front(); }
  // The child of `parent` named `name` (and in `file`, unless empty), or nullptr.
  const FlameNode* Child(const FlameNode& parent, const std::string& name,
                         const std::string& file = "") const;
  // The index of sample type `type`, or -1.
  int TypeIndex(const std::string& type) const;
};

// Merges the profile's samples into a tree. Children are callees: a sample's locations are walked
// from the last (outermost) to the first (the leaf), and each location's lines from the last (the
// function the code belongs to) to the first (the innermost inlined frame). Frames of the same
// function (name and file) under the same parent are one node.
FlameGraph BuildFlameGraph(const Profile& profile);

// The requested sample index is not in the profile: the report's error, whose what() lists the
// sample types the profile has.
using UnknownFlameSampleIndexError = UnknownSampleIndexError;

struct FlameOptions {
  std::string source{};        // the profile's file name, shown in the page's title
  std::string sample_index{};  // shown first; "" = the profile's default_sample_type
};

// The tree and the profile's description as the JSON document the page reads: sample types,
// the initial one, and per node its values with their 95% intervals (Confidence95; none in exact
// mode). Every '<' is written as \u003c so the document can sit inside a <script> element.
// Throws UnknownFlameSampleIndexError.
void WriteFlameJson(const Profile& profile, const FlameGraph& graph, const FlameOptions& options,
                    std::ostream& out);

// The whole page: web/flame_template.html with d3, d3-flame-graph and the JSON document inlined.
// Throws UnknownFlameSampleIndexError.
std::string RenderFlamePage(const Profile& profile, const FlameOptions& options);

}  // namespace heaprec::cli
