// Building the flame graph's call tree from a profile, and writing it into the page.
#include "cli/flame_graph.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "cli/flame_assets.h"
#include "cli/json_writer.h"
#include "cli/text_format.h"
#include "profile/sampling_error.h"

namespace heaprec::cli {
namespace {

// One frame of a location, as it becomes a tree node.
struct Frame {
  std::string key;  // identity among siblings
  std::string name;
  std::string file;
  int64_t line = 0;
  bool inlined = false;
  bool symbolized = true;
};

// Every location's frames, outermost first.
std::unordered_map<uint64_t, std::vector<Frame>> FramesByLocation(const Profile& p) {
  std::unordered_map<uint64_t, const Function*> functions;
  for (const Function& f : p.functions) functions[f.id] = &f;
  std::unordered_map<uint64_t, const Mapping*> mappings;
  for (const Mapping& m : p.mappings) mappings[m.id] = &m;
  std::unordered_map<uint64_t, std::vector<Frame>> frames;
  for (const Location& loc : p.locations) {
    std::vector<Frame>& out = frames[loc.id];
    // lines[0] is the innermost inlined frame, the last one the function the code belongs to.
    for (size_t i = loc.lines.size(); i-- > 0;) {
      const Line& line = loc.lines[i];
      auto it = functions.find(line.function_id);
      if (it == functions.end()) continue;
      const Function& f = *it->second;
      Frame frame;
      frame.name = f.name.empty() ? f.system_name : f.name;
      if (frame.name.empty()) frame.name = HexAddress(loc.address);
      frame.file = f.filename;
      frame.line = line.line;
      frame.inlined = i + 1 < loc.lines.size();
      frame.key = "f:" + frame.name + '\0' + frame.file;
      out.push_back(std::move(frame));
    }
    if (out.empty()) {
      Frame frame;
      frame.name = HexAddress(loc.address);
      auto mit = mappings.find(loc.mapping_id);
      if (mit != mappings.end() && !mit->second->filename.empty()) {
        frame.name += " (" + BaseName(mit->second->filename) + ")";
      }
      frame.symbolized = false;
      frame.key = "a:" + frame.name;
      out.push_back(std::move(frame));
    }
  }
  return frames;
}

// The sample's object size: its `bytes` label, else space / objects of either heaprec pair; -1 if
// unknown (its variance is then 0: the page shows no interval width it cannot know).
int64_t ObjectSize(const Profile& p, const Sample& s) {
  int64_t size = SampleObjectSize(s);
  if (size >= 0) return size;
  for (const char* prefix : {"inuse_", "alloc_"}) {
    int64_t space = -1, objects = -1;
    for (size_t t = 0; t < p.sample_types.size() && t < s.values.size(); ++t) {
      if (p.sample_types[t].type == std::string(prefix) + "space") space = s.values[t];
      if (p.sample_types[t].type == std::string(prefix) + "objects") objects = s.values[t];
    }
    if (space >= 0 && objects > 0) return std::llround(static_cast<double>(space) / objects);
  }
  return -1;
}

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

// The other half of a heaprec pair: inuse_space <-> inuse_objects, alloc_space <-> alloc_objects.
int PairedType(const FlameGraph& g, const std::string& type) {
  auto swap_suffix = [&](const std::string& from, const std::string& to) -> int {
    if (type.size() <= from.size() || type.compare(type.size() - from.size(), from.size(), from)) {
      return -1;
    }
    return g.TypeIndex(type.substr(0, type.size() - from.size()) + to);
  };
  int pair = swap_suffix("_space", "_objects");
  return pair >= 0 ? pair : swap_suffix("_objects", "_space");
}

// JSON numbers for the page: short, and always valid JSON.
std::string Number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// JSON string literal that cannot end a <script> element or open a comment in it.
std::string ScriptSafe(std::string_view s) {
  std::string quoted = JsonWriter::Quote(s);
  std::string out;
  out.reserve(quoted.size());
  for (char c : quoted) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

void WriteNode(const FlameGraph& g, const FlameNode& node, std::ostream& out) {
  out << "{\"name\":" << ScriptSafe(node.name);
  if (!node.file.empty()) out << ",\"file\":" << ScriptSafe(node.file);
  if (!node.lines.empty()) {
    out << ",\"lines\":[";
    for (size_t i = 0; i < node.lines.size(); ++i) out << (i ? "," : "") << node.lines[i];
    out << "]";
  }
  if (node.inlined) out << ",\"inlined\":true";
  if (!node.symbolized) out << ",\"unsymbolized\":true";
  out << ",\"values\":[";
  for (size_t i = 0; i < node.values.size(); ++i) out << (i ? "," : "") << node.values[i];
  out << "]";
  if (g.sampled) {
    std::string low, high;
    for (size_t i = 0; i < node.values.size(); ++i) {
      Interval ci = Confidence95(static_cast<double>(node.values[i]), node.variances[i]);
      low += (i ? "," : "") + Number(ci.low);
      high += (i ? "," : "") + Number(ci.high);
    }
    out << ",\"low\":[" << low << "],\"high\":[" << high << "]";
  }
  if (!node.children.empty()) {
    out << ",\"children\":[";
    for (size_t i = 0; i < node.children.size(); ++i) {
      if (i) out << ",";
      WriteNode(g, g.nodes[node.children[i]], out);
    }
    out << "]";
  }
  out << "}";
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

FlameGraph BuildFlameGraph(const Profile& p) {
  FlameGraph g;
  g.sample_types = p.sample_types;
  g.sampled = IsSampled(p);
  g.period = p.period;
  const size_t types = p.sample_types.size();
  g.nodes.emplace_back();
  g.nodes[0].name = "all";
  g.nodes[0].values.assign(types, 0);
  g.nodes[0].variances.assign(types, 0.0);

  const SamplingModel model(p);
  const auto frames = FramesByLocation(p);
  std::map<std::pair<size_t, std::string>, size_t> child_index;  // (parent, frame key) -> node
  std::vector<int64_t> values(types);
  std::vector<double> variances(types);
  for (const Sample& s : p.samples) {
    int64_t size = ObjectSize(p, s);
    for (size_t t = 0; t < types; ++t) {
      values[t] = t < s.values.size() ? s.values[t] : 0;
      variances[t] = ValueVariance(p.sample_types[t].type, values[t], size, model);
    }
    auto add = [&](size_t n) {
      for (size_t t = 0; t < types; ++t) {
        g.nodes[n].values[t] += values[t];
        g.nodes[n].variances[t] += variances[t];
      }
    };
    size_t current = 0;
    add(current);
    for (auto loc = s.location_ids.rbegin(); loc != s.location_ids.rend(); ++loc) {
      auto it = frames.find(*loc);
      if (it == frames.end()) continue;
      for (const Frame& frame : it->second) {
        auto [pos, inserted] = child_index.try_emplace({current, frame.key}, g.nodes.size());
        if (inserted) {
          FlameNode node;
          node.name = frame.name;
          node.file = frame.file;
          node.symbolized = frame.symbolized;
          node.values.assign(types, 0);
          node.variances.assign(types, 0.0);
          g.nodes[current].children.push_back(g.nodes.size());
          g.nodes.push_back(std::move(node));
        }
        current = pos->second;
        FlameNode& node = g.nodes[current];
        node.inlined = node.inlined || frame.inlined;
        if (frame.line > 0) {
          auto at = std::lower_bound(node.lines.begin(), node.lines.end(), frame.line);
          if (at == node.lines.end() || *at != frame.line) node.lines.insert(at, frame.line);
        }
        add(current);
      }
    }
  }
  SortChildren(g.nodes);
  return g;
}

void WriteFlameJson(const Profile& p, const FlameGraph& g, const FlameOptions& options,
                    std::ostream& out) {
  size_t initial = SelectSampleIndex(p, options.sample_index);
  out << "{\"source\":" << ScriptSafe(options.source);
  out << ",\"sampled\":" << (g.sampled ? "true" : "false");
  out << ",\"period\":" << p.period;
  // What the page's "sampled every PERIOD UNIT" counts: a per-object profile's unit is "count".
  out << ",\"period_unit\":"
      << ScriptSafe(SamplingModel(p).per_object ? std::string("objects") : p.period_type.unit);
  out << ",\"comments\":[";
  for (size_t i = 0; i < p.comments.size(); ++i) {
    out << (i ? "," : "") << ScriptSafe(p.comments[i]);
  }
  out << "],\"initial\":" << initial;
  out << ",\"types\":[";
  for (size_t i = 0; i < g.sample_types.size(); ++i) {
    const ValueType& vt = g.sample_types[i];
    out << (i ? "," : "") << "{\"type\":" << ScriptSafe(vt.type)
        << ",\"unit\":" << ScriptSafe(vt.unit) << ",\"pair\":" << PairedType(g, vt.type) << "}";
  }
  out << "],\"root\":";
  WriteNode(g, g.root(), out);
  out << "}";
}

std::string RenderFlamePage(const Profile& profile, const FlameOptions& options) {
  FlameGraph graph = BuildFlameGraph(profile);
  std::ostringstream json;
  WriteFlameJson(profile, graph, options, json);
  std::string_view page = FlamePageTemplate();
  size_t at = page.find(kFlameDataMarker);
  std::string out;
  out.reserve(page.size() + json.str().size());
  out.append(page.substr(0, at));
  out.append(json.str());
  out.append(page.substr(at + kFlameDataMarker.size()));
  return out;
}

}  // namespace heaprec::cli
