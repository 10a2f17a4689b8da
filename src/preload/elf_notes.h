// Reading a loaded object's GNU build id from its program headers, in the profiled process: no
// allocation, no locks (the caller is inside dl_iterate_phdr, which holds the loader's lock).
#pragma once

#include <link.h>

#include <cstddef>

namespace heaprec::preload {

// A build id of up to 20 bytes as lowercase hex, plus the terminating NUL.
inline constexpr std::size_t kBuildIdHexBytes = 41;

// Writes the object's NT_GNU_BUILD_ID note as hex into hex_out (kBuildIdHexBytes). False if it has
// none.
bool GnuBuildIdHex(const dl_phdr_info* info, char* hex_out);

}  // namespace heaprec::preload
