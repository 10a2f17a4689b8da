// GzipFileSink: compresses what is written to it with zlib and writes it to a file descriptor, or
// to another ByteSink (the HTTP endpoint's socket, which needs send() rather than write()).
//
// zlib's own state (about 270 KiB) comes from the MemoryResource, not malloc, in blocks of exactly
// the sizes zlib asks for: with MmapArena its four 64 KiB buffers are size-class blocks that the
// next stream reuses. Not thread-safe; may block in write(2); never throws.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_sink.h"
#include "core/memory_resource.h"

namespace heaprec {

// How the data goes into the gzip file: deflated (zlib's level 1), or stored, uncompressed, in
// deflate's stored blocks: any gzip reader reads it, and writing it costs a copy and a CRC, no zlib
// state at all. For a file that heaprec run rewrites compressed anyway (its symbolization).
enum class GzipMode { kDeflate, kStore };

class GzipFileSink final : public ByteSink {
 public:
  GzipFileSink(int fd, MemoryResource& memory, GzipMode mode = GzipMode::kDeflate);
  GzipFileSink(ByteSink& output, MemoryResource& memory, GzipMode mode = GzipMode::kDeflate);
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

  // The buffer of compressed (or stored) output, written out whenever it fills.
  static constexpr std::size_t kOutputBytes = 64 * 1024;

 private:
  bool Deflate(int flush);
  bool WriteAll(const unsigned char* data, std::size_t size);
  // kStore: the data gathered so far as one stored block, in one write with the gzip header
  // before the first block and the trailer after the last.
  bool StoreBlock(bool last);

  int fd_ = -1;
  ByteSink* next_ = nullptr;  // instead of fd_, when set
  MemoryResource& memory_;
  ZlibBlocks zlib_blocks_ = {};
  void* stream_ = nullptr;  // z_stream, kept opaque so zlib.h stays out of the header
  unsigned char* output_ = nullptr;
  bool ok_ = false;
  // kStore: output_ gathers a block (and the gzip header or trailer); the CRC and length of all
  // the data.
  bool store_ = false;
  bool header_written_ = false;
  std::size_t stored_ = 0;  // data bytes in output_ after the block header (gzip_file_sink.cc)
  unsigned long crc_ = 0;
  std::uint32_t total_ = 0;  // the input's length modulo 2^32, gzip's ISIZE
};

}  // namespace heaprec
