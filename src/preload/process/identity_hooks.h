// Where a process's profiles go once it runs as a user that may not write the output directory
// (see identity_hooks.cc): heaprec-uid<N>/ inside it, prepared by the privileged process before it
// switched to user N.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace heaprec::preload {

// "<output_directory>/heaprec-uid<uid>"; false when it does not fit.
bool FallbackDirectoryPath(const char* output_directory, uid_t uid, char* out,
                           std::size_t capacity);

// At start-up, when the output directory is not writable: a fallback directory prepared for this
// process's user (by a process that dropped privileges before it exec'd this program) becomes
// this process's fallback. True if there is one.
bool UseFallbackDirectoryIfPrepared(const char* output_directory);

}  // namespace heaprec::preload
