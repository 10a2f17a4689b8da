// Where `heaprec run` finds the files it hands programs, relative to its own executable: the
// preload library (and the check of whatever path it is handed instead) and the installed Ruby
// library.
//
// Installed, the library is private to heaprec: <libdir>/heaprec/libheaprec.so (nothing links it
// by SONAME), reached from <bindir>/heaprec through a relative path worked out at configure time
// (HEAPREC_PRELOAD_DIR_FROM_BINDIR, so any --prefix or DESTDIR works). In the build tree it is
// build/lib/libheaprec.so beside build/bin/heaprec. HEAPREC_LIBRARY overrides both; its value is
// checked before the program runs, because a bad LD_PRELOAD only makes the dynamic loader print a
// warning and run the program unprofiled.
#pragma once

#include <string>
#include <vector>

namespace heaprec::cli {

// The paths tried, in order, for the heaprec executable `executable` (/proc/self/exe).
std::vector<std::string> PreloadLibraryCandidates(const std::string& executable);

// Why `path` cannot be preloaded into this machine's programs ("no such file", "not a regular
// file", "not an ELF file", "not a shared object", "built for another machine"), or "" when it can
// be: an existing regular file with an ELF header of this machine's class, byte order and
// architecture (those of `executable`), of type ET_DYN.
std::string PreloadLibraryProblem(const std::string& path, const std::string& executable);

// $HEAPREC_LIBRARY, or nullptr when it is unset or empty.
const char* ExplicitPreloadLibrary();

// libheaprec.so for this heaprec executable: HEAPREC_LIBRARY when set, else the first candidate
// that exists. "" with *error set to one line saying what is wrong with it, or which paths were
// tried.
std::string FindPreloadLibrary(std::string* error);

// The installed Ruby front end, for RUBYLIB: "<vendordir>:<vendorarchdir>" under heaprec's prefix
// (ruby/CMakeLists.txt), the first holding heaprec/autorun.rb, the second the extension. "" when
// heaprec was built without it (HEAPREC_BUILD_RUBY=OFF) or it is not installed there.
std::string InstalledRubyLibrary(const std::string& executable);

}  // namespace heaprec::cli
