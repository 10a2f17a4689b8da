// The flame-graph page, generated at build time (src/render/flame.cmake runs web/embed_assets.mjs):
// web/flame_template.html with d3's and d3-flame-graph's minified JS and CSS inlined from the
// packages `npm ci` installed from web/package-lock.json.
#pragma once

#include <string_view>

namespace heaprec::render {

// The page, complete but for kFlameDataMarker, which appears in it exactly once, where the JSON
// document goes.
std::string_view FlamePageTemplate();

inline constexpr std::string_view kFlameDataMarker = "@HEAPREC_FLAME_DATA@";

}  // namespace heaprec::render
