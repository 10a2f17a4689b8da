// gzip inflation with a hard output cap (zlib), and compression for the writer (libdeflate).
#include "profile/gzip.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>

#include "profile/profile_error.h"

namespace heaprec::profile::internal {
namespace {

// zlib counts in uInt; feed large inputs in slices that fit.
constexpr size_t kMaxZlibChunk = size_t{1} << 30;
constexpr size_t kOutputBuffer = size_t{256} << 10;

[[noreturn]] void Fail(std::string_view source, const std::string& problem) {
  throw ProfileError(std::string(source) + ": " + problem);
}

}  // namespace

bool LooksGzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace {

// zlib's inflate stream kept for the thread's next profile: a reset keeps the state and window a
// new stream allocates. `heaprec run` and `symbolize` read hundreds of profiles on a few threads.
class InflateStream {
 public:
  InflateStream() {
    // 16 + MAX_WBITS: expect a gzip header and trailer (checked CRC and length).
    ready_ = inflateInit2(&zs_, 16 + MAX_WBITS) == Z_OK;
  }
  ~InflateStream() {
    if (ready_) inflateEnd(&zs_);
  }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  // The stream at the start of a gzip member with no input, or null when zlib could not be
  // initialized. (A reset keeps the input of a stream left in the middle by an error.)
  z_stream* Reset() {
    if (!ready_ || inflateReset(&zs_) != Z_OK) return nullptr;
    zs_.next_in = nullptr;
    zs_.avail_in = 0;
    return &zs_;
  }

 private:
  z_stream zs_{};
  bool ready_ = false;
};

// libdeflate's compressor, kept for the thread's next profile (it allocates its tables once).
struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
using Compressor = std::unique_ptr<libdeflate_compressor, CompressorDeleter>;

// Where a thread's inflation puts its output before handing it on; not cleared, only written.
char* InflateBuffer() {
  thread_local std::unique_ptr<char[]> buffer(new char[kOutputBuffer]);
  return buffer.get();
}

// Inflates `bytes` through a fixed buffer, handing each piece of output to `sink`.
template <typename Sink>
void Inflate(std::string_view bytes, std::string_view source, Sink sink) {
  thread_local InflateStream stream;
  z_stream* zs = stream.Reset();
  if (zs == nullptr) Fail(source, "cannot initialize zlib");

  const auto* next = reinterpret_cast<const Bytef*>(bytes.data());
  size_t remaining = bytes.size();
  auto refill = [&] {
    if (zs->avail_in == 0 && remaining > 0) {
      size_t n = std::min(remaining, kMaxZlibChunk);
      zs->next_in = const_cast<Bytef*>(next);
      zs->avail_in = static_cast<uInt>(n);
      next += n;
      remaining -= n;
    }
  };
  char* buffer = InflateBuffer();
  for (;;) {
    refill();
    zs->next_out = reinterpret_cast<Bytef*>(buffer);
    zs->avail_out = static_cast<uInt>(kOutputBuffer);
    int ret = inflate(zs, Z_NO_FLUSH);
    sink(std::string_view(buffer, kOutputBuffer - zs->avail_out));
    if (ret == Z_STREAM_END) {
      refill();
      if (zs->avail_in == 0) return;
      // Another gzip member follows (as gzip(1) and Go's reader allow); garbage fails the header.
      if (inflateReset(zs) != Z_OK) Fail(source, "cannot reset zlib");
      continue;
    }
    if (ret == Z_BUF_ERROR && zs->avail_in == 0 && remaining == 0) {
      Fail(source,
           "truncated gzip data: the file is incomplete (cut short while it was written or "
           "copied)");
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      Fail(source,
           std::string("corrupt gzip data") + (zs->msg ? std::string(" (") + zs->msg + ")" : ""));
    }
  }
}

}  // namespace

std::string Gunzip(std::string_view bytes, size_t max_bytes, std::string_view source) {
  // First pass: measure without storing, so a gzip bomb is rejected without allocating its
  // inflated size. Profiles are small and inflate fast, so the second pass costs little.
  size_t total = 0;
  Inflate(bytes, source, [&](std::string_view piece) {
    total += piece.size();
    if (total > max_bytes) {
      Fail(source,
           "decompressed profile exceeds the limit of " + std::to_string(max_bytes >> 20) + " MiB");
    }
  });
  std::string out;
  out.reserve(total);
  Inflate(bytes, source, [&](std::string_view piece) { out.append(piece); });
  return out;
}

// With libdeflate, whose level 1 compresses a profile in about 40% of zlib's level-1 time and a
// few percent smaller (docs/benchmarks.md, "the rewrite"): the whole profile is in memory, which
// is what libdeflate needs, and `heaprec run` compresses every profile of a run.
std::string Gzip(std::string_view bytes) {
  // Level 1, like the profiles heaprec writes in-process (see core/gzip_file_sink.cc) and Go's.
  thread_local Compressor compressor(libdeflate_alloc_compressor(1));
  if (compressor == nullptr) throw ProfileError("cannot initialize libdeflate");
  std::string out(libdeflate_gzip_compress_bound(compressor.get(), bytes.size()), '\0');
  const size_t size = libdeflate_gzip_compress(compressor.get(), bytes.data(), bytes.size(),
                                               out.data(), out.size());
  // The bound guarantees room: 0 would be libdeflate's failure.
  if (size == 0) throw ProfileError("gzip compression failed");
  out.resize(size);
  return out;
}

}  // namespace heaprec::profile::internal
