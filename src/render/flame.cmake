# The flame page of `heaprec flame`: the generated source that embeds it (web/flame_template.html
# with d3 and d3-flame-graph inlined) in heaprec_render. Included from src/render/CMakeLists.txt.
#
# The front-end packages come from the npm registry, pinned by web/package-lock.json: `npm ci` installs
# them into the build tree (never into the source tree), and only again when package.json or the lock
# changes. web/embed_assets.mjs then writes flame_assets.cc. The same node_modules holds
# playwright-core, which the browser test of the page (tests/cli) uses.
find_program(HEAPREC_NODE node)
find_program(HEAPREC_NPM npm)
if(NOT HEAPREC_NODE OR NOT HEAPREC_NPM)
  message(FATAL_ERROR
    "heaprec flame needs Node.js and npm at build time, to install d3-flame-graph from "
    "web/package-lock.json and embed it; node or npm was not found on PATH. Install Node.js (20 or "
    "later) with npm, or run scripts/install-deps.sh.")
endif()

set(HEAPREC_WEB_SOURCE_DIR ${PROJECT_SOURCE_DIR}/web)
set(HEAPREC_WEB_BINARY_DIR ${PROJECT_BINARY_DIR}/web CACHE INTERNAL "npm ci output (node_modules)")
set(HEAPREC_WEB_STAMP ${HEAPREC_WEB_BINARY_DIR}/node_modules/.heaprec-npm-ci.stamp)
set(HEAPREC_FLAME_ASSETS_CC ${CMAKE_CURRENT_BINARY_DIR}/flame_assets.cc)

add_custom_command(
  OUTPUT ${HEAPREC_WEB_STAMP}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${HEAPREC_WEB_BINARY_DIR}
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${HEAPREC_WEB_SOURCE_DIR}/package.json
          ${HEAPREC_WEB_SOURCE_DIR}/package-lock.json ${HEAPREC_WEB_BINARY_DIR}
  COMMAND ${HEAPREC_NPM} ci --no-audit --no-fund --loglevel=error
  COMMAND ${CMAKE_COMMAND} -E touch ${HEAPREC_WEB_STAMP}
  WORKING_DIRECTORY ${HEAPREC_WEB_BINARY_DIR}
  DEPENDS ${HEAPREC_WEB_SOURCE_DIR}/package.json ${HEAPREC_WEB_SOURCE_DIR}/package-lock.json
  COMMENT "npm ci: d3-flame-graph and the flame-graph page test's playwright-core (web/package-lock.json)"
  VERBATIM)

add_custom_command(
  OUTPUT ${HEAPREC_FLAME_ASSETS_CC}
  COMMAND ${HEAPREC_NODE} ${HEAPREC_WEB_SOURCE_DIR}/embed_assets.mjs
          ${HEAPREC_WEB_SOURCE_DIR}/flame_template.html ${HEAPREC_WEB_BINARY_DIR}/node_modules
          ${HEAPREC_FLAME_ASSETS_CC}
  DEPENDS ${HEAPREC_WEB_STAMP} ${HEAPREC_WEB_SOURCE_DIR}/embed_assets.mjs
          ${HEAPREC_WEB_SOURCE_DIR}/flame_template.html
  COMMENT "Embedding the flame-graph page (web/flame_template.html, d3, d3-flame-graph)"
  VERBATIM)
# The tests that need node_modules (tests/cli) depend on this target.
add_custom_target(heaprec_web_assets DEPENDS ${HEAPREC_FLAME_ASSETS_CC})

target_sources(heaprec_render PRIVATE ${HEAPREC_FLAME_ASSETS_CC})
