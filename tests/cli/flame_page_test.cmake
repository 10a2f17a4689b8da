# The flame page of `heaprec flame` in headless Chromium, driven by playwright-core
# (flame_page_test.mjs) on a profile of flame_workload taken with `heaprec run`. Included from
# tests/cli/CMakeLists.txt.

# Only with HEAPREC_BROWSER_TESTS (which needs the flame page and the tests).
if(NOT HEAPREC_BROWSER_TESTS)
  return()
endif()

# Built the way the e2e workloads are: optimized, with debug info and frame pointers.
add_executable(heaprec_flame_workload flame_workload.cc)
set_target_properties(heaprec_flame_workload PROPERTIES OUTPUT_NAME flame_workload)
target_compile_options(heaprec_flame_workload PRIVATE -O1 -g -fno-omit-frame-pointer)

# Debian's Chromium (scripts/install-deps.sh installs the package `chromium`). With
# HEAPREC_BROWSER_TESTS on, the test is part of the suite: without the browser, configuration fails
# rather than skipping it.
find_program(HEAPREC_CHROMIUM NAMES chromium PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT HEAPREC_CHROMIUM)
  message(FATAL_ERROR "chromium is missing: run scripts/install-deps.sh (Debian package chromium), "
                      "or configure with -DHEAPREC_BROWSER_TESTS=OFF; the flame-graph page test "
                      "runs in headless Chromium")
endif()
add_custom_target(heaprec_flame_page_test_deps ALL
  DEPENDS heaprec heaprec_preload heaprec_flame_workload heaprec_wl_leaks heaprec_web_assets)
add_test(NAME flame_page_test
  COMMAND ${HEAPREC_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/flame_page_test.mjs
          --heaprec $<TARGET_FILE:heaprec>
          --workload $<TARGET_FILE:heaprec_flame_workload>
          --node-modules ${HEAPREC_WEB_BINARY_DIR}/node_modules
          --chromium ${HEAPREC_CHROMIUM}
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/flame_page_test
          --screenshot ${PROJECT_SOURCE_DIR}/docs/images/flame.png)
set_tests_properties(flame_page_test PROPERTIES TIMEOUT 180 LABELS browser)

# The same browser on `heaprec leaks --html` (leaks_page_test.mjs): wl_leaks's series, charted as
# small multiples.
add_test(NAME leaks_page_test
  COMMAND ${HEAPREC_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/leaks_page_test.mjs
          --heaprec $<TARGET_FILE:heaprec>
          --workload $<TARGET_FILE:heaprec_wl_leaks>
          --node-modules ${HEAPREC_WEB_BINARY_DIR}/node_modules
          --chromium ${HEAPREC_CHROMIUM}
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/leaks_page_test
          --screenshot ${PROJECT_SOURCE_DIR}/docs/images/leaks.png)
set_tests_properties(leaks_page_test PROPERTIES TIMEOUT 180 LABELS "browser;leaks")

# `heaprec ui`'s page in the same browser (ui_page_test.mjs), on wl_leaks's series, written and
# served.
add_test(NAME ui_page_test
  COMMAND ${HEAPREC_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/ui_page_test.mjs
          --heaprec $<TARGET_FILE:heaprec>
          --workload $<TARGET_FILE:heaprec_wl_leaks>
          --node-modules ${HEAPREC_WEB_BINARY_DIR}/node_modules
          --chromium ${HEAPREC_CHROMIUM}
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/ui_page_test
          --screenshot ${PROJECT_SOURCE_DIR}/docs/images/ui.png)
set_tests_properties(ui_page_test PROPERTIES TIMEOUT 180 LABELS browser)
