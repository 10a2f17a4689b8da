// A ByteSink that keeps what the pprof writer sends, for tests that decode it.
#pragma once

#include <cstddef>
#include <string>

#include "core/byte_sink.h"

namespace heaprec {

class StringSink : public ByteSink {
 public:
  bool Write(const void* data, std::size_t size) override {
    bytes.append(static_cast<const char*>(data), size);
    ++writes;
    return true;
  }
  std::string bytes;
  int writes = 0;  // calls to Write: each is a system call of a file sink's
};

}  // namespace heaprec
