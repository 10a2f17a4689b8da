// Building the flame graph's call tree from a profile.
#include "analysis/flame_graph.h"

#include <algorithm>
#include <map>
#include <utility>

namespace heaprec::analysis {
namespace {

using profile::Profile;
using profile::Sample;

void SortChildren(std::vector<FlameNode>& nodes) {
  for (FlameNode& node : nodes) {
    std::sort(node.children.begin(), node.children.end(), [&](size_t a, size_t b) {
      const FlameNode& x = nodes[a];
      const FlameNode& y = nodes[b];
      if (x.name != y.name) return x.name < y.name;
      if (x.file != y.file) return x.file < y.file;
      return x.symbolized && !y.symbolized;
    });
  }
}

}  // namespace

const FlameNode* FlameGraph::Child(const FlameNode& parent, const std::string& name,
                                   const std::string& file) const {
  for (size_t c : parent.children) {
    const FlameNode& child = nodes[c];
    if (child.name == name && (file.empty() || child.file == file)) return &child;
  }
  return nullptr;
}

int FlameGraph::TypeIndex(const std::string& type) const {
  for (size_t i = 0; i < sample_types.size(); ++i) {
    if (sample_types[i].type == type) return static_cast<int>(i);
  }
  return -1;
}

FlameGraph BuildFlameGraph(const Profile& p, const std::string& sample_index,
                           const ViewOptions& view_options) {
  FlameGraph g;
  g.header = HeaderOf(p);
  g.sample_types = p.sample_types;
  g.initial = SelectSampleIndex(p, sample_index);
  const size_t types = p.sample_types.size();
  g.nodes.emplace_back();
  g.nodes[0].name = "all";
  g.nodes[0].values.assign(types, 0);
  g.nodes[0].variances.assign(types, 0.0);

  const ProfileView view(p, view_options);
  std::vector<LocationFrame> stack;
  std::map<std::pair<size_t, size_t>, size_t> child_index;  // (parent, function) -> node
  std::vector<int64_t> values(types);
  std::vector<double> variances(types);
  for (const Sample& s : p.samples) {
    for (size_t t = 0; t < types; ++t) {
      values[t] = t < s.values.size() ? s.values[t] : 0;
      variances[t] = view.KnownVariance(s, t);
    }
    auto add = [&](size_t n) {
      for (size_t t = 0; t < types; ++t) {
        g.nodes[n].values[t] += values[t];
        g.nodes[n].variances[t] += variances[t];
      }
    };
    size_t current = 0;
    add(current);
    // Callees are children: from the outermost frame to the site.
    view.SiteStack(s, stack);
    for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {
      auto [pos, inserted] = child_index.try_emplace({current, frame->function}, g.nodes.size());
      if (inserted) {
        const FrameId& id = view.functions()[frame->function];
        FlameNode node;
        node.name = id.DisplayName();
        node.file = id.file;
        node.symbolized = id.symbolized();
        node.values.assign(types, 0);
        node.variances.assign(types, 0.0);
        g.nodes[current].children.push_back(g.nodes.size());
        g.nodes.push_back(std::move(node));
      }
      current = pos->second;
      FlameNode& node = g.nodes[current];
      node.inlined = node.inlined || frame->inlined;
      if (frame->line > 0) {
        auto at = std::lower_bound(node.lines.begin(), node.lines.end(), frame->line);
        if (at == node.lines.end() || *at != frame->line) node.lines.insert(at, frame->line);
      }
      add(current);
    }
  }
  SortChildren(g.nodes);
  return g;
}

}  // namespace heaprec::analysis
