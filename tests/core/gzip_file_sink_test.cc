// The gzip sink: what it writes reads back whole, and zlib's memory comes from the MemoryResource
// in blocks the arena can keep in its size classes.
#include "core/gzip_file_sink.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/memory_resource.h"
#include "profile/gzip.h"
#include "string_sink.h"

namespace heaprec {
namespace {

// The system allocator, noting the largest block asked for.
class LargestBlock final : public MemoryResource {
 public:
  void* Allocate(std::size_t bytes) override {
    largest = std::max(largest, bytes);
    return system_.Allocate(bytes);
  }
  void Deallocate(void* p, std::size_t bytes) override { system_.Deallocate(p, bytes); }
  std::size_t BytesInUse() const override { return system_.BytesInUse(); }
  std::size_t largest = 0;

 private:
  SystemMemoryResource system_;
};

std::string Text(std::size_t bytes) {
  std::string text;
  for (std::size_t i = 0; text.size() < bytes; ++i)
    text += "frame " + std::to_string(i % 977) + ";";
  return text.substr(0, bytes);
}

TEST(GzipFileSinkTest, WhatIsWrittenReadsBack) {
  LargestBlock memory;
  StringSink out;
  const std::string text = Text(300 * 1024);
  {
    GzipFileSink sink(out, memory);
    ASSERT_TRUE(sink.ok());
    ASSERT_TRUE(sink.Write(text.data(), text.size() / 3));
    ASSERT_TRUE(sink.Write(text.data() + text.size() / 3, text.size() - text.size() / 3));
    ASSERT_TRUE(sink.Finish());
  }
  EXPECT_LT(out.bytes.size(), text.size());
  EXPECT_EQ(profile::internal::Gunzip(out.bytes, 1 << 30, "test"), text);
  EXPECT_EQ(memory.BytesInUse(), 0u) << "zlib's memory was all given back";
}

// Stored: any gzip reader reads it back (blocks of at most 64 KiB, the CRC and length checked by
// the reader), it is not smaller than what was written, and zlib allocates nothing for it. One
// write per block, the gzip header and trailer included: a small profile is one write.
TEST(GzipFileSinkTest, StoredReadsBackUncompressedWithoutZlibState) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1000}, std::size_t{300 * 1024}}) {
    LargestBlock memory;
    StringSink out;
    const std::string text = Text(bytes);
    {
      GzipFileSink sink(out, memory, GzipMode::kStore);
      ASSERT_TRUE(sink.ok());
      ASSERT_TRUE(sink.Write(text.data(), text.size() / 3));
      ASSERT_TRUE(sink.Write(text.data() + text.size() / 3, text.size() - text.size() / 3));
      ASSERT_TRUE(sink.Finish());
    }
    EXPECT_GE(out.bytes.size(), text.size() + 18) << bytes;  // header, trailer, block headers
    const std::size_t blocks = bytes == 0 ? 1 : (bytes + 65512) / 65513;  // 64 KiB less 23 a block
    EXPECT_EQ(out.writes, static_cast<int>(blocks)) << bytes;
    EXPECT_EQ(profile::internal::Gunzip(out.bytes, 1 << 30, "test"), text) << bytes;
    EXPECT_LE(memory.largest, std::size_t{64 * 1024}) << "the output buffer only";
    EXPECT_EQ(memory.BytesInUse(), 0u);
  }
}

// zlib's window, hash chains, hash heads and pending buffer are 64 KiB each: asked for as they are,
// they fit MmapArena's largest size class (64 KiB) and are reused by the next profile's stream. A
// size header in front made them 64 KiB + 16: a mapping each, made and faulted in per profile.
TEST(GzipFileSinkTest, ZlibBlocksFitTheArenasSizeClasses) {
  LargestBlock memory;
  StringSink out;
  GzipFileSink sink(out, memory);
  ASSERT_TRUE(sink.ok());
  EXPECT_LE(memory.largest, std::size_t{64 * 1024});
}

}  // namespace
}  // namespace heaprec
