// zlib-based gzip inflation with a hard output cap, and deflation for the writer.
#include "profile/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

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

// Inflates `bytes` through a fixed buffer, handing each piece of output to `sink`.
template <typename Sink>
void Inflate(std::string_view bytes, std::string_view source, Sink sink) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (checked CRC and length).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) Fail(source, "cannot initialize zlib");
  struct Guard {
    z_stream* zs;
    ~Guard() { inflateEnd(zs); }
  } guard{&zs};

  const auto* next = reinterpret_cast<const Bytef*>(bytes.data());
  size_t remaining = bytes.size();
  auto refill = [&] {
    if (zs.avail_in == 0 && remaining > 0) {
      size_t n = std::min(remaining, kMaxZlibChunk);
      zs.next_in = const_cast<Bytef*>(next);
      zs.avail_in = static_cast<uInt>(n);
      next += n;
      remaining -= n;
    }
  };
  std::string buffer(kOutputBuffer, '\0');
  for (;;) {
    refill();
    zs.next_out = reinterpret_cast<Bytef*>(buffer.data());
    zs.avail_out = static_cast<uInt>(buffer.size());
    int ret = inflate(&zs, Z_NO_FLUSH);
    sink(std::string_view(buffer.data(), buffer.size() - zs.avail_out));
    if (ret == Z_STREAM_END) {
      refill();
      if (zs.avail_in == 0) return;
      // Another gzip member follows (as gzip(1) and Go's reader allow); garbage fails the header.
      if (inflateReset(&zs) != Z_OK) Fail(source, "cannot reset zlib");
      continue;
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && remaining == 0) {
      Fail(source,
           "truncated gzip data: the file is incomplete (cut short while it was written or "
           "copied)");
    }
    if (ret != Z_OK && ret != Z_BUF_ERROR) {
      Fail(source,
           std::string("corrupt gzip data") + (zs.msg ? std::string(" (") + zs.msg + ")" : ""));
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
  z_stream zs{};
  // Level 1, like the profiles heaprec writes in-process (see core/gzip_file_sink.cc) and Go's.
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw ProfileError("cannot initialize zlib");
  }
  struct Guard {
    z_stream* zs;
    ~Guard() { deflateEnd(zs); }
  } guard{&zs};
  if (bytes.size() > kMaxZlibChunk) throw ProfileError("profile too large to compress");
  std::string out(deflateBound(&zs, bytes.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  // deflateBound guarantees a single Z_FINISH call completes.
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw ProfileError("gzip compression failed");
  out.resize(zs.total_out);
  return out;
}

}  // namespace heaprec::profile::internal
