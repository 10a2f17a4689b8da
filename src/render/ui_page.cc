#include "render/ui_page.h"

#include <sstream>
#include <string_view>

#include "render/flame_page.h"
#include "render/json_writer.h"
#include "render/ui_assets.h"

namespace heaprec::render {
namespace {

// `json` with every '<' written as \u003c: '<' only occurs inside strings in a JSON document, where
// the escape means the same, and the document can then sit in a <script> element.
std::string ScriptSafe(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

void WriteTimeline(const UiProcessTimeline& t, JsonWriter& j) {
  j.BeginObject();
  j.Key("pid").Int(t.pid);
  j.Key("interval").Int(static_cast<int64_t>(t.timeline.interval));
  j.Key("peak_ms").Int(static_cast<int64_t>(t.timeline.peak_ms));
  j.Key("peak").Int(t.timeline.peak);
  j.Key("points").BeginArray();
  for (const analysis::TimelinePoint& p : t.timeline.points) {
    j.BeginArray();
    j.Int(static_cast<int64_t>(p.t_ms)).Int(p.live).Int(p.max).Int(static_cast<int64_t>(p.rss));
    j.Int(p.allocated);
    j.EndArray();
  }
  j.EndArray();
  j.EndObject();
}

// The profile's time on its process's timeline, in ms from the timeline's start; none without one.
std::optional<int64_t> TimelineMs(const UiProfile& p, const std::vector<UiProcessTimeline>& all) {
  if (!p.pid || p.time_nanos <= 0) return std::nullopt;
  for (const UiProcessTimeline& t : all) {
    if (t.pid != *p.pid) continue;
    const int64_t start = static_cast<int64_t>(t.timeline.start_ns);
    return p.time_nanos >= start ? (p.time_nanos - start) / 1000000 : 0;
  }
  return std::nullopt;
}

}  // namespace

void WriteUiJson(const UiDocument& d, std::ostream& out) {
  JsonWriter j(out, {.style = JsonWriter::Style::kCompact, .script_safe = true});
  j.BeginObject();
  j.Key("source").String(d.source);
  j.Key("initial").Int(static_cast<int64_t>(d.initial));
  j.Key("profiles").BeginArray();
  for (const UiProfile& p : d.profiles) {
    j.BeginObject();
    j.Key("path").String(p.path);
    j.Key("label").String(p.label);
    j.Key("pid");
    p.pid ? j.Int(*p.pid) : j.Null();
    j.Key("reason").String(p.reason);
    j.Key("t_ms");
    const std::optional<int64_t> t_ms = TimelineMs(p, d.timelines);
    t_ms ? j.Int(*t_ms) : j.Null();
    std::ostringstream tree;
    WriteFlameJson(p.tree, {.source = p.path}, tree);
    j.Key("tree").Document(tree.str());
    j.EndObject();
  }
  j.EndArray();
  j.Key("timelines").BeginArray();
  for (const UiProcessTimeline& t : d.timelines) WriteTimeline(t, j);
  j.EndArray();
  j.Key("leaks");
  if (d.leaks_json.empty()) {
    j.Null();
  } else {
    j.Document(ScriptSafe(d.leaks_json));
  }
  j.EndObject();
}

bool HasUiPage() { return !UiPageTemplate().empty(); }

std::string RenderUiPage(const UiDocument& document) {
  std::ostringstream json;
  WriteUiJson(document, json);
  std::string_view page = UiPageTemplate();
  const size_t at = page.find(kUiDataMarker);
  std::string out;
  out.reserve(page.size() + json.str().size());
  out.append(page.substr(0, at));
  out.append(json.str());
  out.append(page.substr(at + kUiDataMarker.size()));
  return out;
}

}  // namespace heaprec::render
