// Reading this process's own memory where it may not be mapped: through the kernel
// (process_vm_readv on ourselves), which fails with EFAULT instead of faulting. For memory that
// another thread may unmap at any moment (a library being dlclosed while a dump describes it) or
// that a wrong unwind rule points at. A system call per use: for cold paths, or once per page.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

// Copies `bytes` from `from` into `to`; false (and `to` unspecified) if any of it is unmapped.
// errno is preserved.
bool ReadOwnMemory(void* to, std::uintptr_t from, std::size_t bytes);

// Whether `bytes` (at most 16) at `address` can be read.
bool IsReadable(std::uintptr_t address, std::size_t bytes);

}  // namespace heaprec::preload
