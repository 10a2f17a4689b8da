// `heaprec flame`'s page: the call tree (analysis/flame_graph.h) and the profile's description as
// a JSON document inside web/flame_template.html, with d3 and d3-flame-graph inlined
// (render/flame_assets.h), so the one HTML file works offline. docs/design/flame-graph.md.
#pragma once

#include <ostream>
#include <string>

#include "analysis/flame_graph.h"

namespace heaprec::render {

struct FlameOptions {
  std::string source{};  // the profile's file name, shown in the page's title
};

// The JSON document the page reads: sample types, the initial one, and per node its values with
// their 95% intervals (profile::Confidence95; none in exact mode). Every '<' is written as \u003c
// so the document can sit inside a <script> element.
void WriteFlameJson(const analysis::FlameGraph& graph, const FlameOptions& options,
                    std::ostream& out);

// Whether this heaprec was built with the page (CMake option HEAPREC_FLAME_PAGE, on by default;
// off, nothing in the build needs Node.js and there is no page to render).
bool HasFlamePage();

// The whole page.
std::string RenderFlamePage(const analysis::FlameGraph& graph, const FlameOptions& options);

}  // namespace heaprec::render
