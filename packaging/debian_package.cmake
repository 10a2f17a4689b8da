# The Debian package, made by CPack's DEB generator from the tree that was just built and tested
# (`cpack -G DEB` in the build directory; docs/design/install.md says why not debhelper). It holds
# the `heaprec` component; dpkg-shlibdeps works out its Depends from the binaries it ships.

set(HEAPREC_DEB_RELEASE 1)
set(HEAPREC_DEB_MAINTAINER "heaprec maintainers <maintainers@users.noreply.a-seed-0d67efff.example>")

# /usr/share/doc/heaprec: the copyright file in Debian's machine-readable format, and a
# changelog.Debian.gz for this version (dated by SOURCE_DATE_EPOCH when it is set).
string(TIMESTAMP HEAPREC_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(changelog.Debian.in ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9nf ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian
                COMMAND_ERROR_IS_FATAL ANY)
install(FILES copyright ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT debian EXCLUDE_FROM_ALL)
# What lintian reports and is so by design, each with its reason (lintian.overrides.in; the paths
# are the package's, under /usr).
configure_file(lintian.overrides.in ${CMAKE_CURRENT_BINARY_DIR}/lintian.overrides @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lintian.overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME heaprec COMPONENT debian EXCLUDE_FROM_ALL)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME heaprec)
set(CPACK_PACKAGE_VENDOR "heaprec")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${HEAPREC_DEB_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "sampling live-heap profiler for native programs")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# One package of two components: the `debian` files above belong with `heaprec`. The Ruby front
# end (component `ruby`) is left out: it would be a package of its own, ruby-heaprec, so that
# native users do not get libruby.
set(CPACK_COMPONENTS_ALL heaprec debian)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_PACKAGE_NAME heaprec)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${HEAPREC_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# heaprec loads libdebuginfod.so.1 only when it first asks a debuginfod server.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libdebuginfod1")
# The extended description; CPack puts the summary above it and indents it as the control file wants.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "heaprec answers which call stacks hold the memory a program is holding,
without recompiling or switching allocators, cheaply enough for production.
`heaprec run` preloads its library into a dynamically linked program and
writes Go-style heap pprof profiles, already symbolized; `heaprec report`,
`flame`, `diff` and `leaks` read them.

This package holds the heaprec command, its preload library, the C API's
header and pkg-config file (heaprec.pc), man pages and bash completion.")
include(CPack)
