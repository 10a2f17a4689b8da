// `heaprec ui`'s page (docs/design/ui.md): every profile it was given, each as the call tree of
// `heaprec flame` (render/flame_page.h's JSON), the timeline of each process, and the leaks
// analysis of the series, as one JSON document inside web/ui_template.html with d3,
// d3-flame-graph and uPlot inlined (render/ui_assets.h): one HTML file that works offline.
//
// The document: {"source", "initial": index into profiles, "profiles": [{"path", "label", "pid"
// (or null), "reason", "t_ms": the profile's time in ms from its process's timeline start (null
// without one), "tree": the flame JSON}], "timelines": [{"pid", "interval", "peak_ms", "peak",
// "points": [[t_ms, live, max, rss, allocated], ...]}], "leaks": `heaprec leaks --format json`'s
// document, or null}.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/flame_graph.h"
#include "analysis/timeline.h"

namespace heaprec::render {

struct UiProfile {
  std::string path;
  std::string label;  // what the page's profile menu says: "pid 12 exit (p.12.pb.gz)"
  std::optional<int64_t> pid;
  std::string reason;
  int64_t time_nanos = 0;  // the profile's time_nanos (0: unknown)
  analysis::FlameGraph tree;
};

struct UiProcessTimeline {
  int64_t pid = 0;
  analysis::Timeline timeline;
};

struct UiDocument {
  std::string source;
  size_t initial = 0;
  std::vector<UiProfile> profiles;
  std::vector<UiProcessTimeline> timelines;
  std::string leaks_json;  // "" for none
};

void WriteUiJson(const UiDocument& document, std::ostream& out);

// Whether this heaprec was built with the page (HEAPREC_FLAME_PAGE, which brings Node.js and npm).
bool HasUiPage();

std::string RenderUiPage(const UiDocument& document);

}  // namespace heaprec::render
