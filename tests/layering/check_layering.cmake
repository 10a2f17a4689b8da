# The dependency rule between the layers of src/ (docs/design/layout.md), checked on the sources:
# every #include of a heaprec header in a C or C++ file under src/ must name a header of its own
# layer or of one its layer may depend on. Run by ctest as the test `layering`:
#
#   cmake -DSOURCE_DIR=<checkout>/src -P check_layering.cmake
#
# It fails naming each file, line and include that breaks the rule.
cmake_minimum_required(VERSION 3.25)

if(NOT IS_DIRECTORY "${SOURCE_DIR}")
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<checkout>/src -P check_layering.cmake")
endif()

# What each layer (a directory of src/) may include besides its own headers: a directory of src/
# ("profile/"), or one header of src/ or of include/ ("preload/control/settings.h"). The CLI side is
# cli -> render -> analysis -> profile -> schema, with symbolize on profile, and base under all of
# them; the in-process side (core, preload) never includes a header of the CLI side.
set(allowed_schema)
set(allowed_core schema/)
# preload implements the public C API, include/heaprec/heaprec.h, and the runtime interface,
# include/heaprec/runtime.h.
set(allowed_preload core/ schema/ heaprec/heaprec.h heaprec/runtime.h)
# base holds the CLI side's file helpers (reading a file, replacing one atomically), which render,
# symbolize, push and cli all need: it sits below every one of them, so it includes nothing of
# heaprec, only the standard library and POSIX. Any layer of the CLI side may include it.
set(allowed_base)
set(allowed_profile base/ schema/)
set(allowed_symbolize base/ profile/ schema/)
set(allowed_analysis base/ profile/ schema/)
set(allowed_render base/ analysis/ profile/ schema/)
# push sends profiles to Pyroscope: it reads them, and symbolizes them in memory before sending.
set(allowed_push base/ profile/ symbolize/ schema/)
# run_command.cc validates `heaprec run`'s flags with the preload library's own parsers (the
# settings', and --http's address), and attach_command.cc reads a process's dump signal with them.
set(allowed_cli base/ render/ analysis/ profile/ symbolize/ push/ schema/
    preload/control/settings.h preload/http/address.h)

set(layers schema core preload base profile symbolize analysis render push cli)

# The preload library's parsers of untrusted text (the files preload/parsers.cmake lists) are
# compiled into the heaprec command and the fuzzers as well as into libheaprec.so: they may include
# only one another's headers, core/ and schema/, or the command would need the rest of the library.
set(parser_files)
set(parser_headers)
if(EXISTS "${SOURCE_DIR}/preload/parsers.cmake")
  include("${SOURCE_DIR}/preload/parsers.cmake")
  foreach(parser IN LISTS heaprec_preload_http_parser_sources heaprec_preload_settings_sources)
    string(REGEX REPLACE "\\.cc$" "" stem "${parser}")
    list(APPEND parser_files preload/${stem}.cc preload/${stem}.h)
    list(APPEND parser_headers preload/${stem}.h)
  endforeach()
endif()
# The first directory of an include path that names a header of heaprec (src/ or include/): an
# include of one of these, in quotes or angle brackets, is checked.
set(heaprec_roots ${layers} heaprec)

file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*.h" "${SOURCE_DIR}/*.hh"
     "${SOURCE_DIR}/*.hpp" "${SOURCE_DIR}/*.c" "${SOURCE_DIR}/*.cc" "${SOURCE_DIR}/*.cpp")
list(SORT sources)

set(violations 0)
set(checked 0)
foreach(source IN LISTS sources)
  string(REGEX MATCH "^[^/]+" layer "${source}")
  if(source STREQUAL layer OR NOT layer IN_LIST layers)
    message("src/${source}: src/${layer} has no layering rule: add one to ${CMAKE_CURRENT_LIST_FILE}")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  set(allowed ${layer}/ ${allowed_${layer}})
  if(source IN_LIST parser_files)
    set(allowed ${parser_headers} core/ schema/)
  endif()
  string(JOIN ", " allowed_text ${allowed})

  # The file as a list of its lines. Backslashes, semicolons and square brackets would split or
  # join list elements: they are replaced first (no include path of ours holds one).
  file(READ "${SOURCE_DIR}/${source}" text)
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")

  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]*)[>\"]")
      continue()
    endif()
    set(quoted "${CMAKE_MATCH_1}")
    set(path "${CMAKE_MATCH_2}")
    string(REGEX MATCH "^[^/]+" root "${path}")
    if(quoted STREQUAL "<" AND NOT root IN_LIST heaprec_roots)
      continue()  # a system or third-party header
    endif()
    math(EXPR checked "${checked} + 1")
    set(ok FALSE)
    if(NOT path MATCHES "(^|/)\\.\\.?/" AND root IN_LIST heaprec_roots)
      foreach(prefix IN LISTS allowed)
        if(prefix MATCHES "/$")
          string(FIND "${path}" "${prefix}" at)
          if(at EQUAL 0)
            set(ok TRUE)
          endif()
        elseif(path STREQUAL prefix)
          set(ok TRUE)
        endif()
      endforeach()
    endif()
    if(NOT ok)
      if(quoted STREQUAL "<")
        set(spelled "<${path}>")
      else()
        set(spelled "\"${path}\"")
      endif()
      if(NOT root IN_LIST heaprec_roots OR path MATCHES "(^|/)\\.\\.?/")
        set(why "name heaprec's headers by their path under src/ or include/")
      else()
        if(source IN_LIST parser_files)
          set(why "a parser of preload/parsers.cmake may include only ${allowed_text}")
        else()
          set(why "${layer} may include only ${allowed_text}")
        endif()
      endif()
      message("src/${source}:${number}: #include ${spelled}: ${why}")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()

list(LENGTH sources files)
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} of ${checked} includes in ${files} files under src/ break the "
                      "layering rule (docs/design/layout.md)")
endif()
message(STATUS "layering: ${checked} includes of heaprec headers in ${files} files follow the rule")
