// The call tree behind `heaprec flame`: samples merged by call path, root first, with one value
// and one sampling variance per sample type at every node. render/flame_page.h writes it into the
// page (docs/design/flame-graph.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profile_header.h"
#include "analysis/profile_view.h"
#include "profile/profile.h"

namespace heaprec::analysis {

struct FlameNode {
  // The function's FrameId::DisplayName(): its demangled name, or for an unsymbolized location
  // "0xADDR (mapping)". The root is "all".
  std::string name;
  std::string file;             // the function's source file; "" if unknown
  std::vector<int64_t> lines;   // distinct source lines of this frame on the merged stacks, sorted
  bool inlined = false;         // inlined into its caller on at least one merged stack
  bool symbolized = true;       // false for an address without function information
  std::vector<int64_t> values;  // per Profile::sample_types entry: sum over the merged samples
  // Per sample type: the sum of the samples' variances (0 if exact, and for a sample whose object
  // size is unknown: the page shows no interval width it cannot know).
  std::vector<double> variances;
  std::vector<size_t> children;  // indexes into FlameGraph::nodes, ordered by name then file
};

struct FlameGraph {
  // Of the profile it was built from. header.sampled(): the nodes' variances, and so the
  // intervals, mean something.
  ProfileHeader header;
  std::vector<profile::ValueType> sample_types;
  size_t initial = 0;            // the sample type shown first (SelectSampleIndex)
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
// function (name and file) under the same parent are one node. A sample's stack starts at its
// allocation site (ProfileView::SiteStack): the frames it calls into, allocator and library
// internals, are not shown. `sample_index` is the type shown first ("" = the profile's default);
// throws UnknownSampleIndexError.
FlameGraph BuildFlameGraph(const profile::Profile& profile, const std::string& sample_index = "",
                           const ViewOptions& view_options = {});

}  // namespace heaprec::analysis
