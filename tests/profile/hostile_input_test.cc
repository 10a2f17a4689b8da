// The reader must turn every malformed, truncated, inconsistent or oversized input into a
// ProfileError, and never crash or allocate without bound.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <memory>
#include <protozero/pbf_writer.hpp>
#include <random>
#include <string>
#include <vector>

#include "profile/gzip.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

// Why ReadRewritableProfile rejects `bytes`, "" when it accepts them.
std::string RewritableError(std::string_view bytes, const ReadOptions& options) {
  try {
    ReadRewritableProfile(bytes, "input.pb.gz", options);
    return "";
  } catch (const ProfileError& e) {
    return e.what();
  }
}

// ReadRewritableProfile, which checks the samples without decoding them, must reject what
// ReadProfile rejects (`error`, "" when it accepted) and accept what it accepts; with
// `same_message`, for inputs with one problem, it must say the same. It needs less memory, so it
// may load a profile over ReadProfile's budget.
void ExpectRewritableAgrees(std::string_view bytes, const ReadOptions& options,
                            const std::string& error, bool same_message) {
  const std::string rewritable_error = RewritableError(bytes, options);
  if (error.find("would need more than") != std::string::npos) return;
  if (same_message) {
    EXPECT_EQ(rewritable_error, error);
  } else {
    EXPECT_EQ(rewritable_error.empty(), error.empty()) << error << " | " << rewritable_error;
  }
}

// Decodes and reports whether the input was rejected; any exception other than ProfileError
// fails the test.
bool Rejected(std::string_view bytes, const ReadOptions& options = {}) {
  try {
    ReadProfile(bytes, "input.pb.gz", options);
    ExpectRewritableAgrees(bytes, options, "", false);
    return false;
  } catch (const ProfileError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "multi-line message";
    // Truncated, random and mutated inputs have several problems: either may be named first.
    ExpectRewritableAgrees(bytes, options, e.what(), false);
    return true;
  }
}

std::string ErrorOf(std::string_view bytes, const ReadOptions& options = {}) {
  try {
    ReadProfile(bytes, "input.pb.gz", options);
  } catch (const ProfileError& e) {
    ExpectRewritableAgrees(bytes, options, e.what(), true);
    return e.what();
  }
  ADD_FAILURE() << "input was accepted";
  return "";
}

// A gzip stream that inflates to at least `size` zero bytes, built in milliseconds: after a full
// flush, deflate's output for another MiB of zeros no longer depends on earlier data, so that
// piece can simply be repeated. The trailer's CRC is then wrong, which does not matter to tests
// that must stop at the size limit first.
std::string GzipZeros(size_t size) {
  constexpr size_t kChunk = 1 << 20;
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string zeros(kChunk, '\0');
  auto deflate_chunk = [&](int flush) {
    std::string out(kChunk, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(zeros.data());
    zs.avail_in = flush == Z_FINISH ? 0 : static_cast<uInt>(kChunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, flush);
    out.resize(out.size() - zs.avail_out);
    return out;
  };
  std::string out = deflate_chunk(Z_FULL_FLUSH);  // gzip header + first MiB
  std::string repeated = deflate_chunk(Z_FULL_FLUSH);
  for (size_t done = kChunk; done < size; done += kChunk) out += repeated;
  out += deflate_chunk(Z_FINISH);
  deflateEnd(&zs);
  return out;
}

TEST(HostileInputTest, EmptyInput) {
  EXPECT_NE(ErrorOf("").find("input.pb.gz: empty"), std::string::npos);
}

TEST(HostileInputTest, TextIsNotAProfile) {
  EXPECT_NE(ErrorOf("hello, world\n").find("not a"), std::string::npos);
}

TEST(HostileInputTest, EveryTruncationOfGzipIsRejected) {
  std::string bytes = EncodeProfile(test_support::MakeFullProfile());
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_TRUE(Rejected(std::string_view(bytes).substr(0, len))) << "length " << len;
  }
  EXPECT_NE(ErrorOf(bytes.substr(0, bytes.size() - 3)).find("truncated"), std::string::npos);
}

TEST(HostileInputTest, TruncatedProtobufNeverCrashes) {
  std::string raw = EncodeProfile(test_support::MakeFullProfile(), false);
  size_t rejected = 0;
  // Cutting at a field boundary can leave a valid (smaller) profile; anything else must fail.
  for (size_t len = 0; len < raw.size(); ++len) rejected += Rejected(raw.substr(0, len));
  EXPECT_GT(rejected, raw.size() * 9 / 10);
  // Cut in the middle of a string-table entry.
  size_t pos = raw.find("heaprec " HEAPREC_VERSION);
  ASSERT_NE(pos, std::string::npos);
  EXPECT_NE(ErrorOf(raw.substr(0, pos + 3)).find("not a gzip or pprof file"), std::string::npos);
}

TEST(HostileInputTest, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 3000; ++i) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    if (i % 3 == 0 && bytes.size() >= 2) {
      bytes[0] = '\x1f';  // make some of them look gzipped
      bytes[1] = '\x8b';
    }
    Rejected(bytes);
  }
}

TEST(HostileInputTest, MutatedProfilesNeverCrash) {
  std::string raw = EncodeProfile(test_support::MakeFullProfile(), false);
  std::mt19937 rng(777);
  for (int i = 0; i < 5000; ++i) {
    std::string bytes = raw;
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    // Whatever decodes must be internally consistent: re-encoding it must decode the same.
    try {
      Profile p = ReadProfile(bytes, "input.pb.gz");
      EXPECT_EQ(ReadProfile(EncodeProfile(p)), p);
      // Its samples written back as they were read: the same profile.
      EXPECT_EQ(ReadProfile(EncodeProfile(ReadRewritableProfile(bytes))), p);
    } catch (const ProfileError& e) {
      ExpectRewritableAgrees(bytes, {}, e.what(), false);
    }
  }
}

TEST(HostileInputTest, DanglingLocationId) {
  Profile p = test_support::MakeFullProfile();
  p.samples[0].location_ids.push_back(99);
  EXPECT_NE(ErrorOf(EncodeProfile(p)).find("missing location id 99"), std::string::npos);
}

TEST(HostileInputTest, DanglingMappingAndFunctionIds) {
  Profile p = test_support::MakeFullProfile();
  p.locations[0].mapping_id = 5;
  EXPECT_NE(ErrorOf(EncodeProfile(p)).find("missing mapping id 5"), std::string::npos);
  p = test_support::MakeFullProfile();
  p.locations[0].lines[0].function_id = 77;
  EXPECT_NE(ErrorOf(EncodeProfile(p)).find("missing function id 77"), std::string::npos);
}

TEST(HostileInputTest, DuplicateAndZeroIds) {
  Profile p = test_support::MakeFullProfile();
  p.locations[1].id = p.locations[0].id;
  EXPECT_NE(ErrorOf(EncodeProfile(p)).find("duplicate location"), std::string::npos);
  p = test_support::MakeFullProfile();
  p.mappings[1].id = 0;
  EXPECT_NE(ErrorOf(EncodeProfile(p)).find("reserved id 0"), std::string::npos);
}

TEST(HostileInputTest, ValueCountMismatch) {
  Profile p = test_support::MakeFullProfile();
  p.samples[0].values.pop_back();
  EXPECT_NE(ErrorOf(EncodeProfile(p)).find("3 values"), std::string::npos);
}

// Found by the fuzzer: packed values whose last varint is cut short inside a sample.
// ReadRewritableProfile, which only checks the samples, must decode them to find it.
TEST(HostileInputTest, PackedValueCutShortInASample) {
  std::string raw;
  {
    protozero::pbf_writer w(raw);
    {
      protozero::pbf_writer vt(w, 1);  // sample_type
      vt.add_int64(1, 1);
    }
    {
      protozero::pbf_writer sample(w, 2);
      sample.add_string(2, std::string("\x01\x80", 2));  // values: 1, then half a varint
    }
    w.add_string(6, "");
    w.add_string(6, "objects");
  }
  EXPECT_NE(ErrorOf(raw).find("ends in the middle of a field"), std::string::npos);
}

TEST(HostileInputTest, StringIndexOutOfRange) {
  std::string raw;
  {
    protozero::pbf_writer w(raw);
    {
      protozero::pbf_writer vt(w, 1);  // sample_type
      vt.add_int64(1, 5);              // type: string index 5 of 2
    }
    w.add_string(6, "");
    w.add_string(6, "x");
  }
  EXPECT_NE(ErrorOf(raw).find("string index 5 is out of range"), std::string::npos);
  std::string negative;
  {
    protozero::pbf_writer w(negative);
    w.add_string(6, "");
    w.add_int64(14, -1);  // default_sample_type
  }
  EXPECT_NE(ErrorOf(negative).find("out of range"), std::string::npos);
}

TEST(HostileInputTest, MissingStringTable) {
  std::string raw;
  {
    protozero::pbf_writer w(raw);
    w.add_int64(9, 1);  // time_nanos only
  }
  EXPECT_NE(ErrorOf(raw).find("string table"), std::string::npos);
}

TEST(HostileInputTest, OverlongVarint) {
  std::string raw("\x32\x00", 2);  // string_table: ""
  raw += '\x48';                   // time_nanos, varint
  raw += std::string(11, '\xff');  // more than the 10 bytes a 64-bit varint may use
  raw += '\x01';
  EXPECT_TRUE(Rejected(raw));
  EXPECT_TRUE(Rejected(internal::Gzip(raw)));
}

TEST(HostileInputTest, HugeLengthPrefix) {
  std::string raw("\x32\x00", 2);
  raw += "\x12\xff\xff\xff\xff\x0f";  // a sample claiming to be 4 GiB long
  EXPECT_TRUE(Rejected(raw));
}

TEST(HostileInputTest, WrongWireType) {
  std::string raw("\x32\x00", 2);
  raw += "\x08\x01";  // sample_type (a message) encoded as a varint
  EXPECT_NE(ErrorOf(raw).find("wire type"), std::string::npos);
}

TEST(HostileInputTest, GroupWireTypeIsRejected) {
  std::string raw("\x32\x00", 2);
  raw += "\x0b";  // field 1, deprecated start-group wire type
  EXPECT_TRUE(Rejected(raw));
}

TEST(HostileInputTest, CorruptGzip) {
  std::string bytes = EncodeProfile(test_support::MakeFullProfile());
  bytes[bytes.size() / 2] ^= 0x55;
  bytes[bytes.size() / 2 + 1] ^= 0x55;
  EXPECT_TRUE(Rejected(bytes));
  std::string trailing = EncodeProfile(test_support::MakeFullProfile()) + "garbage";
  EXPECT_TRUE(Rejected(trailing));
}

TEST(HostileInputTest, GzipBombBeyondSmallLimit) {
  ReadOptions options;
  options.max_decompressed_bytes = 1 << 20;
  EXPECT_NE(ErrorOf(GzipZeros(2 << 20), options).find("exceeds the limit"), std::string::npos);
  // Exactly at the limit is fine for the decompressor (the zeros then fail to parse as a profile).
  EXPECT_EQ(ErrorOf(GzipZeros(1 << 20), options).find("exceeds"), std::string::npos);
}

// Each thread keeps its zlib streams from one profile to the next (profile/gzip.cc): a read that
// failed in the middle of a stream must leave nothing behind for the next one.
TEST(HostileInputTest, AReadAfterAFailedOneStartsClean) {
  const std::string good = EncodeProfile(test_support::MakeFullProfile());
  const std::string expected = EncodeProfile(ReadProfile(good, "good"));
  ReadOptions small;
  small.max_decompressed_bytes = 1 << 20;
  const std::string failing[] = {good.substr(0, good.size() / 2), good + "garbage",
                                 GzipZeros(2 << 20)};
  for (const std::string& bad : failing) {
    EXPECT_TRUE(Rejected(bad, small));
    EXPECT_EQ(EncodeProfile(ReadProfile(good, "good")), expected);
  }
  // And compressing after reading, on the same thread, gives the same bytes as before.
  EXPECT_EQ(EncodeProfile(ReadProfile(expected, "again")), expected);
}

TEST(HostileInputTest, GzipBombBeyondDefaultLimit) {
  // ~1 MiB of gzip that would inflate to 1 GiB + 1 MiB.
  std::string bomb = GzipZeros(kMaxProfileBytes + (1 << 20));
  EXPECT_LT(bomb.size(), 2u << 20);
  EXPECT_NE(ErrorOf(bomb).find("exceeds the limit of 1024 MiB"), std::string::npos);
}

// Decodes `bytes` from an exactly sized heap block, so that a sanitizer build sees any read past
// the end (a std::string's terminator would hide a one-byte over-read).
Profile ReadExactlySized(std::string_view bytes, const ReadOptions& options = {}) {
  auto copy = std::make_unique<char[]>(bytes.size());
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  return ReadProfile(std::string_view(copy.get(), bytes.size()), "input", options);
}

// A boolean field tag with no value at the very end of the input: protozero's get_bool() read the
// missing byte before noticing (fuzz/crashes/pprof_reader_fuzzer/truncated-bool-overread).
TEST(HostileInputTest, TruncatedBoolAtEndOfInput) {
  const std::string_view inputs[] = {
      std::string_view("\x32\x00\x1a\x01\x38", 5),          // Mapping.has_functions
      std::string_view("\x32\x00\x1a\x03\x08\x01\x50", 7),  // Mapping.has_inline_frames
      std::string_view("\x32\x00\x22\x03\x08\x01\x28", 7),  // Location.is_folded
  };
  for (std::string_view input : inputs) {
    EXPECT_THROW(ReadExactlySized(input), ProfileError);
    EXPECT_THROW(ReadExactlySized(input.substr(0, input.size() - 1)), ProfileError);
  }
}

TEST(HostileInputTest, BoolIsTheWholeVarint) {
  // Mapping {id: 1, has_functions: <varint>}.
  auto has_functions = [](std::string_view varint) {
    std::string raw("\x32\x00\x1a", 3);
    raw += static_cast<char>(3 + varint.size());
    raw += "\x08\x01\x38";
    raw += varint;
    return ReadExactlySized(raw).mappings.at(0).has_functions;
  };
  EXPECT_FALSE(has_functions(std::string_view("\x00", 1)));
  EXPECT_FALSE(has_functions(std::string_view("\x80\x00", 2)));  // non-canonical zero
  EXPECT_FALSE(has_functions(std::string_view("\x80\x80\x80\x00", 4)));
  EXPECT_TRUE(has_functions("\x01"));
  EXPECT_TRUE(has_functions("\x02"));
  EXPECT_TRUE(has_functions("\x80\x01"));  // 128: nonzero, hence true
  EXPECT_TRUE(has_functions(std::string_view("\x81\x00", 2)));
  // Location {id: 1, is_folded: 80 00}.
  std::string folded("\x32\x00\x22\x05\x08\x01\x28\x80\x00", 9);
  EXPECT_FALSE(ReadExactlySized(folded).locations.at(0).is_folded);
  // A varint too long or cut short is an error, not a boolean.
  std::string overlong("\x32\x00\x1a\x0e\x08\x01\x38", 7);
  overlong += std::string(11, '\x80');
  EXPECT_THROW(ReadExactlySized(overlong), ProfileError);
  EXPECT_THROW(ReadExactlySized(std::string_view("\x32\x00\x1a\x04\x08\x01\x38\x80", 8)),
               ProfileError);
}

// --- decoded-memory budget ---

// A raw profile of `count` empty samples: 2 bytes each in the file, a Sample in memory.
std::string EmptySamples(size_t count) {
  std::string raw("\x32\x00", 2);
  for (size_t i = 0; i < count; ++i) raw.append("\x12\x00", 2);
  return raw;
}

ReadOptions Budget(size_t bytes) {
  ReadOptions options;
  options.max_decoded_bytes = bytes;
  return options;
}

TEST(HostileInputTest, DecodedBudgetStopsEmptySamples) {
  std::string raw = EmptySamples(100'000);  // 200 KB, more than 7 MB as Samples
  EXPECT_NE(ErrorOf(raw, Budget(1 << 20))
                .find("input.pb.gz: profile is too large: it would need more than 1 MiB to load"),
            std::string::npos);
  EXPECT_TRUE(Rejected(internal::Gzip(raw), Budget(1 << 20)));
  EXPECT_EQ(ReadProfile(raw).samples.size(), 100'000u);  // the default budget allows it
  EXPECT_EQ(ReadProfile(raw, "input", Budget(16 << 20)).samples.size(), 100'000u);
}

TEST(HostileInputTest, DecodedBudgetStopsAGzipAmplifier) {
  // The README's example, smaller: a few KiB of gzip, 4 MiB of protobuf, over 150 MiB as a model.
  std::string bomb = internal::Gzip(EmptySamples(2 << 20));
  EXPECT_LT(bomb.size(), 64u << 10);
  EXPECT_NE(ErrorOf(bomb, Budget(64 << 20)).find("would need more than 64 MiB to load"),
            std::string::npos);
}

TEST(HostileInputTest, DecodedBudgetCountsStringCopies) {
  // One 1 MiB string, used as the key of 100 labels: 1 MiB of input, 100 MiB of copies.
  std::string raw;
  {
    protozero::pbf_writer w(raw);
    w.add_string(6, "");
    w.add_string(6, std::string(1 << 20, 'k'));
    protozero::pbf_writer sample(w, 2);
    for (int i = 0; i < 100; ++i) {
      protozero::pbf_writer label(sample, 3);
      label.add_int64(1, 1);  // key: string 1
    }
  }
  EXPECT_LT(raw.size(), (1u << 20) + 4096);
  EXPECT_NE(ErrorOf(raw, Budget(16 << 20)).find("would need more than 16 MiB"), std::string::npos);
  EXPECT_EQ(ReadProfile(raw, "input", Budget(128 << 20)).samples.at(0).labels.size(), 100u);
}

TEST(HostileInputTest, DecodedBudgetCountsPackedValues) {
  // One sample with a million packed values of one byte each: 8 MiB as int64s.
  std::string raw("\x32\x00", 2);
  std::string values;
  {
    protozero::pbf_writer w(values);
    std::vector<int64_t> zeros(1'000'000, 0);
    w.add_packed_int64(2, zeros.begin(), zeros.end());
  }
  {
    protozero::pbf_writer w(raw);
    w.add_message(2, values);
  }
  EXPECT_NE(ErrorOf(raw, Budget(4 << 20)).find("would need more than 4 MiB"), std::string::npos);
  // With the budget it needs, it loads (the sample then has no sample type to match: invalid).
  EXPECT_NE(ErrorOf(raw, Budget(16 << 20)).find("1000000 values"), std::string::npos);
}

TEST(HostileInputTest, DecodedBudgetMessageForOddSizes) {
  EXPECT_NE(ErrorOf(EmptySamples(1000), Budget(3 << 10)).find("more than 3 KiB to load"),
            std::string::npos);
  EXPECT_NE(ErrorOf(EmptySamples(1000), Budget(1000)).find("more than 1000 bytes to load"),
            std::string::npos);
}

TEST(HostileInputTest, RealProfilesFitSmallBudgets) {
  Profile p = test_support::MakeFullProfile();
  EXPECT_EQ(ReadProfile(EncodeProfile(p), "input", Budget(64 << 10)), p);
  EXPECT_TRUE(Rejected(EncodeProfile(p), Budget(256)));
}

TEST(HostileInputTest, MissingFileAndDirectory) {
  try {
    ReadProfileFile("/nonexistent/heap.pb.gz");
    FAIL();
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open /nonexistent/heap.pb.gz"), std::string::npos);
  }
  EXPECT_THROW(ReadProfileFile(test_support::MakeTempDir()), ProfileError);
}

}  // namespace
}  // namespace heaprec
