// ByteSink: where a serialized profile goes (a gzip stream to a file, a buffer in tests).
#pragma once

#include <cstddef>

namespace heaprec {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Returns false on error; the writer then stops and reports failure.
  virtual bool Write(const void* data, std::size_t size) = 0;
};

}  // namespace heaprec
