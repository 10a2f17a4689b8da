// Prefault: makes pages present before they are first written, in one system call.
//
// Every page heaprec's tables use is first touched by a page fault. On the virtual machines heaprec
// is measured on, the first write to an anonymous page costs about 8.5 us as a fault, and about
// 3.7 us when MADV_POPULATE_WRITE (Linux 5.14) made it present with its neighbours (the page's
// allocation and zeroing are in both; docs/benchmarks.md, part 14, "what a process pays on this
// VM"). So a table is populated at once only where most of its pages will be written soon: a hash
// table that entries land on by hash once it holds a few dozen, a rehash's new table, an array
// filled in order a window at a time. A table of which a short process uses a page or two stays to
// fault page by page.
//
// Best effort: an older kernel (EINVAL), a range not mapped writable, or memory short (ENOMEM)
// leave the pages to fault as before. Never changes errno. Async-signal-safe.
#pragma once

#include <cstddef>

namespace heaprec {

void PrefaultForWrite(void* begin, std::size_t bytes);

}  // namespace heaprec
