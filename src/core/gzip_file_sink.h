// GzipFileSink: compresses what is written to it with zlib and writes it to a file descriptor, or
// to another ByteSink (the HTTP endpoint's socket, which needs send() rather than write()).
//
// zlib's own state (about 270 KiB) comes from the MemoryResource, not malloc, in blocks of exactly
// the sizes zlib asks for: with MmapArena its four 64 KiB buffers are size-class blocks that the
// next stream reuses. Not thread-safe; may block in write(2); never throws.
#pragma once

#include <cstddef>

#include "core/byte_sink.h"
#include "core/memory_resource.h"

namespace heaprec {

class GzipFileSink final : public ByteSink {
 public:
  GzipFileSink(int fd, MemoryResource& memory);
  GzipFileSink(ByteSink& output, MemoryResource& memory);
  ~GzipFileSink() override;
  GzipFileSink(const GzipFileSink&) = delete;
  GzipFileSink& operator=(const GzipFileSink&) = delete;

  bool ok() const { return ok_; }
  bool Write(const void* data, std::size_t size) override;
  // Flushes the compressor and writes the gzip trailer. Returns false if anything failed.
  bool Finish();

  // What zlib allocated, with the sizes its free function is not told. A deflate stream makes five
  // allocations.
  struct ZlibBlocks {
    static constexpr std::size_t kMax = 8;
    MemoryResource* memory;
    void* blocks[kMax];
    std::size_t bytes[kMax];
    std::size_t count;
  };

 private:
  bool Deflate(int flush);
  bool WriteAll(const unsigned char* data, std::size_t size);

  static constexpr std::size_t kOutputBytes = 64 * 1024;
  int fd_ = -1;
  ByteSink* next_ = nullptr;  // instead of fd_, when set
  MemoryResource& memory_;
  ZlibBlocks zlib_blocks_ = {};
  void* stream_ = nullptr;  // z_stream, kept opaque so zlib.h stays out of the header
  unsigned char* output_ = nullptr;
  bool ok_ = false;
};

}  // namespace heaprec
