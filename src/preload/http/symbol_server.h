// /debug/pprof/symbol's answers (Go's net/http/pprof Symbol handler): for each address of the
// query that a loaded object's symbol tables name, "0xADDR NAME", NAME as the table has it
// (mangled: pprof demangles it as it demangles its own).
//
// Runs on the HTTP server's thread, inside the profiled process, so it keeps the endpoint's rules
// (docs/design/http-endpoint.md): no malloc and no arena (a fixed batch of addresses on the
// thread's stack); no lock (the object of an address comes from _dl_find_object, which takes none,
// loaded_objects.h); files opened close-on-exec above the program's descriptors (OpenOwn), read
// with pread (elf_symbols.h), closed before the next object; a file whose build id is not the
// loaded object's (rebuilt since it was loaded) names nothing.
#pragma once

#include <cstddef>

#include "core/byte_sink.h"

namespace heaprec::preload {

// Where the query's bytes come from: the request's body, or its query string.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `size` bytes into `buffer`: how many, 0 at the end, -1 on an error (a client gone).
  virtual long Read(char* buffer, std::size_t size) = 0;
};

// Writes the body of the answer to `query` into `out`: "num_symbols: 1", then one line per
// address named. False when `out` failed (the client went away).
bool WriteSymbolAnswers(ByteSource& query, ByteSink& out);

}  // namespace heaprec::preload
