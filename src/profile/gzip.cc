// zlib-based gzip inflation with a hard output cap, and deflation for the writer.
#include "profile/gzip.h"

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

// A z_stream kept for the thread's next profile: starting a stream allocates zlib's state (for
// deflate about 260 KiB, whose pages the allocator hands back to the kernel and faults in again for
// each small profile); a reset keeps it. `heaprec run` and `symbolize` read and write hundreds of
// profiles of a few KiB on a few threads.
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

class DeflateStream {
 public:
  DeflateStream() {
    // Level 1, like the profiles heaprec writes in-process (see core/gzip_file_sink.cc) and Go's.
    ready_ =
        deflateInit2(&zs_, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~DeflateStream() {
    if (ready_) deflateEnd(&zs_);
  }
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;
  z_stream* Reset() { return ready_ && deflateReset(&zs_) == Z_OK ? &zs_ : nullptr; }

 private:
  z_stream zs_{};
  bool ready_ = false;
};

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

std::string Gzip(std::string_view bytes) {
  thread_local DeflateStream stream;
  z_stream* zs = stream.Reset();
  if (zs == nullptr) throw ProfileError("cannot initialize zlib");
  if (bytes.size() > kMaxZlibChunk) throw ProfileError("profile too large to compress");
  std::string out(deflateBound(zs, bytes.size()) + 64, '\0');
  zs->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs->avail_in = static_cast<uInt>(bytes.size());
  zs->next_out = reinterpret_cast<Bytef*>(out.data());
  zs->avail_out = static_cast<uInt>(out.size());
  // deflateBound guarantees a single Z_FINISH call completes.
  if (deflate(zs, Z_FINISH) != Z_STREAM_END) throw ProfileError("gzip compression failed");
  out.resize(zs->total_out);
  return out;
}

}  // namespace heaprec::profile::internal
