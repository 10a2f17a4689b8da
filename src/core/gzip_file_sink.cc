#include "core/gzip_file_sink.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace heaprec {
namespace {

// zlib asks for items * size bytes and frees with only the pointer: the size is kept in the sink's
// table rather than in a header before the block, which made each of zlib's 64 KiB buffers
// 64 KiB + 16 bytes, past the arena's largest size class: a mapping of its own, made and unmapped
// again, every page faulted in again, for every profile a process wrote.
voidpf ZAlloc(voidpf opaque, uInt items, uInt size) {
  auto* table = static_cast<GzipFileSink::ZlibBlocks*>(opaque);
  if (table->count == GzipFileSink::ZlibBlocks::kMax) return Z_NULL;
  std::size_t bytes = static_cast<std::size_t>(items) * size;
  void* block = table->memory->Allocate(bytes);
  if (block == nullptr) return Z_NULL;
  table->blocks[table->count] = block;
  table->bytes[table->count] = bytes;
  ++table->count;
  return block;
}

void ZFree(voidpf opaque, voidpf address) {
  if (address == Z_NULL) return;
  auto* table = static_cast<GzipFileSink::ZlibBlocks*>(opaque);
  for (std::size_t i = 0; i < table->count; ++i) {
    if (table->blocks[i] != address) continue;
    table->memory->Deallocate(address, table->bytes[i]);
    --table->count;
    table->blocks[i] = table->blocks[table->count];
    table->bytes[i] = table->bytes[table->count];
    return;
  }
}

}  // namespace

GzipFileSink::GzipFileSink(ByteSink& output, MemoryResource& memory, GzipMode mode)
    : GzipFileSink(-1, memory, mode) {
  next_ = &output;
}

GzipFileSink::GzipFileSink(int fd, MemoryResource& memory, GzipMode mode)
    : fd_(fd), memory_(memory) {
  output_ = static_cast<unsigned char*>(memory_.Allocate(kOutputBytes));
  if (mode == GzipMode::kStore) {
    store_ = true;
    crc_ = crc32(0, Z_NULL, 0);
    ok_ = output_ != nullptr;
    return;
  }
  auto* stream = static_cast<z_stream*>(memory_.Allocate(sizeof(z_stream)));
  if (stream == nullptr || output_ == nullptr) {
    memory_.Deallocate(stream, sizeof(z_stream));
    return;
  }
  std::memset(stream, 0, sizeof(z_stream));
  zlib_blocks_.memory = &memory_;
  stream->zalloc = ZAlloc;
  stream->zfree = ZFree;
  stream->opaque = &zlib_blocks_;
  // windowBits 15 + 16 asks zlib for a gzip header and trailer. Level 1, as Go's runtime/pprof
  // writes its profiles: on heaprec's exact-mode profiles 3.4 times faster than level 6 for files
  // 17% larger (measured in docs/benchmarks.md), and the dump runs inside the profiled program.
  if (deflateInit2(stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    memory_.Deallocate(stream, sizeof(z_stream));
    return;
  }
  stream_ = stream;
  ok_ = true;
}

GzipFileSink::~GzipFileSink() {
  if (stream_ != nullptr) {
    deflateEnd(static_cast<z_stream*>(stream_));
    memory_.Deallocate(stream_, sizeof(z_stream));
  }
  memory_.Deallocate(output_, kOutputBytes);
}

bool GzipFileSink::WriteAll(const unsigned char* data, std::size_t size) {
  if (next_ != nullptr) return next_->Write(data, size);
  while (size > 0) {
    ssize_t n = write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool GzipFileSink::Deflate(int flush) {
  auto* stream = static_cast<z_stream*>(stream_);
  for (;;) {
    stream->next_out = output_;
    stream->avail_out = kOutputBytes;
    int rc = deflate(stream, flush);
    if (rc == Z_STREAM_ERROR) return false;
    std::size_t produced = kOutputBytes - stream->avail_out;
    if (produced > 0 && !WriteAll(output_, produced)) return false;
    if (flush == Z_FINISH ? rc == Z_STREAM_END : stream->avail_out != 0) return true;
  }
}

// A stored block: one byte (BFINAL, BTYPE 00; the block starts on a byte boundary, as the one
// before it ended), LEN and its complement, little-endian, then the data. The gzip header (deflate,
// no name, no time, Unix) goes out with the first block and the trailer with the last, in the
// same write: a profile of under 64 KiB is one write, not three, and each write costs the file
// sink a check that the descriptor is still heaprec's (OwnFileSink), a system call of its own.
// output_ holds [room for the gzip header][block header][data][room for the trailer].
constexpr std::size_t kGzipHeaderBytes = 10;
constexpr std::size_t kStoredBlockHeader = 5;
constexpr std::size_t kGzipTrailerBytes = 8;
constexpr std::size_t kStoredDataOffset = kGzipHeaderBytes + kStoredBlockHeader;
constexpr std::size_t kStoredDataBytes =
    GzipFileSink::kOutputBytes - kStoredDataOffset - kGzipTrailerBytes;
static_assert(kStoredDataBytes <= 0xffff, "a stored block holds at most 65,535 bytes");

bool GzipFileSink::StoreBlock(bool last) {
  unsigned char* start = output_ + kGzipHeaderBytes;
  if (!header_written_) {
    static const unsigned char kHeader[kGzipHeaderBytes] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    start = output_;
    std::memcpy(start, kHeader, sizeof(kHeader));
    header_written_ = true;
  }
  unsigned char* block = output_ + kGzipHeaderBytes;
  const auto length = static_cast<std::uint16_t>(stored_);
  const auto complement = static_cast<std::uint16_t>(~length);
  block[0] = last ? 1 : 0;
  block[1] = static_cast<unsigned char>(length & 0xff);
  block[2] = static_cast<unsigned char>(length >> 8);
  block[3] = static_cast<unsigned char>(complement & 0xff);
  block[4] = static_cast<unsigned char>(complement >> 8);
  unsigned char* end = output_ + kStoredDataOffset + stored_;
  if (last) {  // the trailer: the CRC-32 and the length mod 2^32 of the data, little-endian
    for (int i = 0; i < 4; ++i) {
      end[i] = static_cast<unsigned char>(crc_ >> (8 * i));
      end[4 + i] = static_cast<unsigned char>(total_ >> (8 * i));
    }
    end += kGzipTrailerBytes;
  }
  bool ok = WriteAll(start, static_cast<std::size_t>(end - start));
  stored_ = 0;
  return ok;
}

bool GzipFileSink::Write(const void* data, std::size_t size) {
  if (!ok_) return false;
  if (store_) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    crc_ = crc32_z(crc_, bytes, size);
    total_ += static_cast<std::uint32_t>(size);
    while (size > 0) {
      std::size_t room = kStoredDataBytes - stored_;
      std::size_t n = size < room ? size : room;
      std::memcpy(output_ + kStoredDataOffset + stored_, bytes, n);
      stored_ += n;
      bytes += n;
      size -= n;
      if (stored_ == kStoredDataBytes && !StoreBlock(false)) return ok_ = false;
    }
    return true;
  }
  auto* stream = static_cast<z_stream*>(stream_);
  stream->next_in = static_cast<Bytef*>(const_cast<void*>(data));
  stream->avail_in = static_cast<uInt>(size);
  ok_ = Deflate(Z_NO_FLUSH) && stream->avail_in == 0;
  return ok_;
}

bool GzipFileSink::Finish() {
  if (!ok_) return false;
  if (store_) {
    ok_ = StoreBlock(true);
    return ok_;
  }
  auto* stream = static_cast<z_stream*>(stream_);
  stream->next_in = nullptr;
  stream->avail_in = 0;
  ok_ = Deflate(Z_FINISH);
  return ok_;
}

}  // namespace heaprec
