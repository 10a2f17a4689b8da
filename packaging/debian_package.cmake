# The Debian packages, made by CPack's DEB generator from the tree that was just built and tested
# (`cpack -G DEB` in the build directory; docs/design/install.md says why not debhelper):
#  - heaprec: components `heaprec` and `debian` (the command, the preload library, the C API, man
#    pages, completion; the copyright file, changelog and lintian overrides);
#  - ruby-heaprec, with HEAPREC_BUILD_RUBY: components `ruby` and `ruby_debian`, the Ruby front end
#    in Ruby's vendor directories, a package of its own so that native users do not get libruby.
# dpkg-shlibdeps works out each one's Depends from the binaries it ships.

set(HEAPREC_DEB_RELEASE 1)
set(HEAPREC_DEB_MAINTAINER "heaprec maintainers <maintainers@users.noreply.a-seed-0d67efff.example>")

# /usr/share/doc/PACKAGE: the copyright file in Debian's machine-readable format, and a
# changelog.Debian.gz for this version (dated by SOURCE_DATE_EPOCH when it is set). Both packages
# come from one source, heaprec, so they share the changelog.
string(TIMESTAMP HEAPREC_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(changelog.Debian.in ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9nf ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian
                COMMAND_ERROR_IS_FATAL ANY)
# debian_files(PACKAGE COMPONENT): the package's files under /usr/share, left out of a plain
# `cmake --install`: the copyright file, the changelog, and PACKAGE.lintian-overrides.in, what
# lintian reports and is so by design, each with its reason (the paths in it are the package's).
function(debian_files package component)
  install(FILES copyright ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component}
          EXCLUDE_FROM_ALL)
  configure_file(${package}.lintian-overrides.in ${package}.lintian-overrides @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${package}.lintian-overrides
          DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME ${package}
          COMPONENT ${component} EXCLUDE_FROM_ALL)
endfunction()
debian_files(heaprec debian)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME heaprec)
set(CPACK_PACKAGE_VENDOR "heaprec")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${HEAPREC_DEB_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Staged with DESTDIR, so that CMAKE_INSTALL_PREFIX is /usr when heaprec.pc is written.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ONE_PER_GROUP)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SOURCE heaprec)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${HEAPREC_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_COMPONENTS_ALL heaprec debian)
set(CPACK_DEBIAN_HEAPREC_PACKAGE_NAME heaprec)
set(CPACK_DEBIAN_HEAPREC_PACKAGE_SECTION devel)
# heaprec loads libdebuginfod.so.1 only when it first asks a debuginfod server.
set(CPACK_DEBIAN_HEAPREC_PACKAGE_RECOMMENDS "libdebuginfod1")
# The summary line, then the extended description, which CPack indents as the control file wants.
# (No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it above each package's description.)
set(CPACK_DEBIAN_HEAPREC_DESCRIPTION "sampling live-heap profiler for native programs
heaprec answers which call stacks hold the memory a program is holding,
without recompiling or switching allocators, cheaply enough for production.
`heaprec run` preloads its library into a dynamically linked program and
writes Go-style heap pprof profiles, already symbolized; `heaprec report`,
`flame`, `diff` and `leaks` read them.

This package holds the heaprec command, its preload library, the C API's
header and pkg-config file (heaprec.pc), man pages and bash completion.")

if(HEAPREC_BUILD_RUBY)
  debian_files(ruby-heaprec ruby_debian)
  list(APPEND CPACK_COMPONENTS_ALL ruby ruby_debian)
  set(CPACK_DEBIAN_RUBY-HEAPREC_PACKAGE_NAME ruby-heaprec)
  set(CPACK_DEBIAN_RUBY-HEAPREC_PACKAGE_SECTION ruby)
  # `heaprec run --ruby` is the usual way in; `require "heaprec"` needs only this package.
  set(CPACK_DEBIAN_RUBY-HEAPREC_PACKAGE_RECOMMENDS "heaprec (= ${PROJECT_VERSION}-${HEAPREC_DEB_RELEASE})")
  set(CPACK_DEBIAN_RUBY-HEAPREC_DESCRIPTION "live-heap profiler for Ruby programs (heaprec)
The Ruby front end of heaprec: a C++ extension that samples live Ruby
objects and writes Go-style heap pprof profiles of them, and the
heaprec library (require heaprec, or heaprec/autorun) that starts it.
`heaprec run --ruby` (package heaprec) profiles a Ruby program with it.")
endif()
include(CPack)
# After include(CPack), which defines the commands: which component goes in which package.
cpack_add_component_group(heaprec)
cpack_add_component(heaprec GROUP heaprec)
cpack_add_component(debian GROUP heaprec)
if(HEAPREC_BUILD_RUBY)
  cpack_add_component_group(ruby-heaprec)
  cpack_add_component(ruby GROUP ruby-heaprec)
  cpack_add_component(ruby_debian GROUP ruby-heaprec)
endif()
