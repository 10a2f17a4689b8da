// The manifest's writing side, inside the profiled process: one line per profile written (and per
// message heaprec could not print), appended to the file named by HEAPREC_MANIFEST, through which
// `heaprec run` learns what every process of the program wrote. The format is
// schema/manifest.h's.
//
// No malloc, no stdio, no locks: async-signal-safe, like the crash profile it reports.
#pragma once

#include <cstddef>

namespace heaprec {

// Appends "pid<TAB>reason<TAB>path\n" to `manifest` with one O_APPEND write, so that concurrent
// processes never interleave a line. For a message, `reason` is schema::kManifestMessage and `path`
// the text (without tabs or newlines). False, having written nothing, when the line does not fit
// or the file cannot be opened; false too when the write was cut short.
bool AppendToManifest(const char* manifest, int pid, const char* reason, const char* path);

// A line of text (schema::kManifestMessage, kManifestDeclined): the parts joined, newlines dropped
// and tabs made spaces, cut at 1 KiB. False when it could not be written.
bool AppendTextToManifest(const char* manifest, int pid, const char* reason,
                          const char* const* parts, std::size_t count);

}  // namespace heaprec
