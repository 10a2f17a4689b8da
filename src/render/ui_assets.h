// The ui page, generated at build time (src/render/ui.cmake runs web/embed_assets.mjs):
// web/ui_template.html with d3's, d3-flame-graph's and uPlot's minified JS and CSS inlined from
// the packages `npm ci` installed from web/package-lock.json.
#pragma once

#include <string_view>

namespace heaprec::render {

// The page, complete but for kUiDataMarker, which appears in it exactly once, where the JSON
// document goes. Empty when heaprec was built without the pages (HEAPREC_FLAME_PAGE=OFF).
std::string_view UiPageTemplate();

inline constexpr std::string_view kUiDataMarker = "@HEAPREC_UI_DATA@";

}  // namespace heaprec::render
