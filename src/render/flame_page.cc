#include "render/flame_page.h"

#include <sstream>
#include <string_view>

#include "analysis/profile_view.h"
#include "profile/sampling_error.h"
#include "render/attach_note.h"
#include "render/flame_assets.h"
#include "render/json_writer.h"

namespace heaprec::render {
namespace {

using analysis::FlameGraph;
using analysis::FlameNode;

// Interval ends need no more digits than a tooltip shows, and the page stays small.
constexpr int kIntervalDigits = 6;

void WriteNode(const FlameGraph& g, const FlameNode& node, JsonWriter& j) {
  j.BeginObject();
  j.Key("name").String(node.name);
  if (!node.file.empty()) j.Key("file").String(node.file);
  if (!node.lines.empty()) {
    j.Key("lines").BeginArray();
    for (int64_t line : node.lines) j.Int(line);
    j.EndArray();
  }
  if (node.inlined) j.Key("inlined").Bool(true);
  if (!node.symbolized) j.Key("unsymbolized").Bool(true);
  j.Key("values").BeginArray();
  for (int64_t value : node.values) j.Int(value);
  j.EndArray();
  if (g.header.sampled()) {
    std::vector<profile::Interval> intervals;
    for (size_t i = 0; i < node.values.size(); ++i) {
      intervals.push_back(
          profile::Confidence95(static_cast<double>(node.values[i]), node.variances[i]));
    }
    j.Key("low").BeginArray();
    for (const profile::Interval& ci : intervals) j.Significant(ci.low, kIntervalDigits);
    j.EndArray();
    j.Key("high").BeginArray();
    for (const profile::Interval& ci : intervals) j.Significant(ci.high, kIntervalDigits);
    j.EndArray();
  }
  if (!node.children.empty()) {
    j.Key("children").BeginArray();
    for (size_t child : node.children) WriteNode(g, g.nodes[child], j);
    j.EndArray();
  }
  j.EndObject();
}

}  // namespace

void WriteFlameJson(const FlameGraph& g, const FlameOptions& options, std::ostream& out) {
  const analysis::ProfileHeader& p = g.header;
  JsonWriter j(out, {.style = JsonWriter::Style::kCompact, .script_safe = true});
  j.BeginObject();
  j.Key("source").String(options.source);
  j.Key("sampled").Bool(g.header.sampled());
  j.Key("period").Int(p.period);
  // What the page's "sampled every PERIOD UNIT" counts: a per-object profile's unit is "count".
  j.Key("period_unit").String(p.per_object ? "objects" : p.period_type.unit);
  // A Ruby profile's native blocks, sampled by bytes beside its objects: "native bytes every ...".
  if (p.native_byte_interval > 0) j.Key("native_byte_interval").Int(p.native_byte_interval);
  // A profile of an attached process leaves out what was allocated before: said in the header.
  if (p.attach) j.Key("attached").String("Attached " + AttachedSummary(*p.attach));
  j.Key("comments").BeginArray();
  for (const std::string& comment : p.comments) j.String(comment);
  j.EndArray();
  j.Key("initial").Int(static_cast<int64_t>(g.initial));
  j.Key("types").BeginArray();
  for (size_t i = 0; i < g.sample_types.size(); ++i) {
    j.BeginObject();
    j.Key("type").String(g.sample_types[i].type);
    j.Key("unit").String(g.sample_types[i].unit);
    j.Key("pair").Int(analysis::PairedSampleType(g.sample_types, i));
    j.EndObject();
  }
  j.EndArray();
  j.Key("root");
  WriteNode(g, g.root(), j);
  j.EndObject();
}

bool HasFlamePage() { return !FlamePageTemplate().empty(); }

std::string RenderFlamePage(const FlameGraph& graph, const FlameOptions& options) {
  std::ostringstream json;
  WriteFlameJson(graph, options, json);
  std::string_view page = FlamePageTemplate();
  size_t at = page.find(kFlameDataMarker);
  std::string out;
  out.reserve(page.size() + json.str().size());
  out.append(page.substr(0, at));
  out.append(json.str());
  out.append(page.substr(at + kFlameDataMarker.size()));
  return out;
}

}  // namespace heaprec::render
