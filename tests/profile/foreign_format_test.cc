// Files that are not heap profiles: each is recognized by content, by itself (foreign_format.h)
// and through the reader, whose one-line error names the file, says what it is and what to do.
#include "profile/foreign_format.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <random>
#include <string>

#include "profile/gzip.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

// The start of a heaptrack recording as heaptrack 1.4 writes it (its file format version 3).
constexpr char kHeaptrackText[] =
    "v 10400 3\nX /usr/bin/true\nI 1000 5e298d\ns d /usr/bin/true\nt 1 0\n";
constexpr char kJemallocText[] =
    "heap_v2/524288\n  t*: 1: 82338 [0: 0]\n  t0: 1: 82338 [0: 0]\n@ 0x7fcab12a2630\n";
constexpr char kGperftoolsText[] =
    "heap profile:    1:   262144 [     1:   262144] @ heapprofile\n"
    "     1:   262144 [     1:   262144] @ 0x4005d4 0x400614\n";

std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::string ErrorOf(const std::string& bytes) {
  try {
    ReadProfile(bytes, "in.file");
  } catch (const ProfileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(ForeignFormatTest, HeaptrackRecordingsCompressedOrNot) {
  const std::string expected =
      "is a heaptrack recording; open it with heaptrack_print or heaptrack_gui, or profile the "
      "program with heaprec run";
  EXPECT_EQ(RecognizeForeignData(kHeaptrackText), expected);
  EXPECT_EQ(RecognizeForeignData(Zstd(kHeaptrackText)), expected);
  // A recording still being written: the zstd frame is cut off after its first blocks (of 128 KiB
  // of text each; hex digits, so that they do not compress to nothing).
  std::string long_text = kHeaptrackText;
  std::mt19937 rng(7);
  while (long_text.size() < (size_t{384} << 10)) long_text += "0123456789abcdef"[rng() % 16];
  std::string compressed = Zstd(long_text);
  EXPECT_EQ(RecognizeForeignData(compressed.substr(0, compressed.size() / 2)), expected);
  // Through the reader: zstd as read, gzip once inflated.
  EXPECT_EQ(ErrorOf(Zstd(kHeaptrackText)), "in.file " + expected);
  EXPECT_EQ(ErrorOf(internal::Gzip(kHeaptrackText)), "in.file " + expected);
}

TEST(ForeignFormatTest, OnlyTheVersionLineMakesHeaptrack) {
  EXPECT_EQ(RecognizeForeignData("v 10400\nX a\n"), "");
  EXPECT_EQ(RecognizeForeignData("v 1040g 3\n"), "");
  EXPECT_EQ(RecognizeForeignData("v  3\n"), "");
  EXPECT_EQ(RecognizeForeignData("version 3\n"), "");
  // Other zstd data is named as such.
  EXPECT_EQ(RecognizeForeignData(Zstd("v 10400 3 but not a line")),
            "is zstd-compressed, not gzip; if it holds a pprof profile, decompress it with unzstd "
            "first (heaprec reads pprof heap profiles, gzipped or not)");
}

TEST(ForeignFormatTest, TextHeapProfilesOfOtherAllocators) {
  EXPECT_EQ(ErrorOf(kJemallocText),
            "in.file is a jemalloc heap profile; read it with jeprof, or profile the program with "
            "heaprec run");
  EXPECT_EQ(ErrorOf(kGperftoolsText),
            "in.file is a heap profile in gperftools' text format (tcmalloc's, or an old Go one); "
            "read it with pprof, or profile the program with heaprec run");
  EXPECT_EQ(ErrorOf(internal::Gzip(kJemallocText)).rfind("in.file is a jemalloc heap profile", 0),
            0u);
}

TEST(ForeignFormatTest, GoCpuProfileIsAValidPprofButNotAHeapProfile) {
  EXPECT_EQ(RecognizeForeignProfile(test_support::MakeGoCpuProfile()),
            "is a CPU profile (sample types samples/count, cpu/nanoseconds), not a heap profile; "
            "read it with pprof, or profile the program's heap with heaprec run");
  EXPECT_EQ(ErrorOf(EncodeProfile(test_support::MakeGoCpuProfile())),
            "in.file " + RecognizeForeignProfile(test_support::MakeGoCpuProfile()));
  Profile contention = test_support::MakeGoCpuProfile();
  contention.sample_types = {{"contentions", "count"}, {"delay", "nanoseconds"}};
  contention.period_type = {"contentions", "count"};
  EXPECT_EQ(RecognizeForeignProfile(contention).rfind("is a contention profile", 0), 0u);
  // Heap profiles, and profiles whose types say nothing, are read.
  EXPECT_EQ(RecognizeForeignProfile(test_support::MakeReportProfile()), "");
  EXPECT_EQ(RecognizeForeignProfile(test_support::MakeRubyProfile()), "");
  EXPECT_EQ(RecognizeForeignProfile(Profile{}), "");
  Profile mixed = test_support::MakeGoCpuProfile();
  mixed.sample_types[0] = {"inuse_space", "bytes"};
  EXPECT_EQ(RecognizeForeignProfile(mixed), "");
}

TEST(ForeignFormatTest, TextIsRecognizedAndQuoted) {
  EXPECT_TRUE(LooksLikeText("hello, world\n"));
  EXPECT_TRUE(LooksLikeText("caf\xc3\xa9 cr\xc3\xa8me\tbr\xc3\xbbl\xc3\xa9\r\n"));
  EXPECT_FALSE(LooksLikeText(std::string("ab\0cd", 5)));
  EXPECT_FALSE(LooksLikeText("\xff\xfe binary"));
  EXPECT_FALSE(LooksLikeText(""));
  // No pprof encoding looks like text: field tags and lengths are control bytes.
  EXPECT_FALSE(LooksLikeText(EncodeProfile(test_support::MakeFullProfile(), false)));
  EXPECT_FALSE(LooksLikeText(EncodeProfile(test_support::MakeRubyProfile(), false)));

  EXPECT_EQ(ErrorOf("hello, world\nsecond line\n"),
            "in.file is a text file, not a profile (it starts with \"hello, world\"); heaprec "
            "reads pprof heap profiles, such as heaprec run writes");
  EXPECT_EQ(ErrorOf(internal::Gzip("<!DOCTYPE html>\n<html>")),
            "in.file is gzip-compressed text, not a profile (it starts with \"<!DOCTYPE html>\"); "
            "heaprec reads pprof heap profiles, such as heaprec run writes");
  // A long first line is cut at 60 bytes, never inside a UTF-8 character (é is 2 bytes: the
  // 59th and 60th here, so it goes whole).
  std::string whole = std::string(58, 'a') + "\xc3\xa9" + "tail";
  EXPECT_NE(DescribeText(whole).find("\"" + std::string(58, 'a') + "\xc3\xa9...\")"),
            std::string::npos)
      << DescribeText(whole);
  std::string cut = std::string(59, 'a') + "\xc3\xa9" + "tail";  // é straddles the cut
  EXPECT_NE(DescribeText(cut).find("\"" + std::string(59, 'a') + "...\")"), std::string::npos)
      << DescribeText(cut);
}

TEST(ForeignFormatTest, EmptyBinaryAndTruncatedInputSayWhatTheyAre) {
  EXPECT_EQ(ErrorOf(""),
            "in.file: empty file, not a profile; heaprec reads pprof heap profiles, such as "
            "heaprec run writes");
  EXPECT_EQ(ErrorOf("\x7f"
                    "ELF\x02\x01\x01"),
            "in.file is an ELF binary (a program or a library), not a profile; to profile a "
            "program, run it with heaprec run -- PROGRAM");
  std::string gzipped = EncodeProfile(test_support::MakeFullProfile());
  EXPECT_EQ(ErrorOf(gzipped.substr(0, gzipped.size() / 2)),
            "in.file: truncated gzip data: the file is incomplete (cut short while it was written "
            "or copied)");
  // Binary data that is no protobuf either: in words, not the decoder's exception names.
  std::string error = ErrorOf("\x0f\x01\x02\x03");
  EXPECT_EQ(error.rfind("in.file: not a gzip or pprof file (its protobuf data ", 0), 0u) << error;
  EXPECT_EQ(error.find("exception"), std::string::npos) << error;
  std::string raw = EncodeProfile(test_support::MakeFullProfile(), false);
  EXPECT_EQ(ErrorOf(internal::Gzip(raw.substr(0, raw.size() - 3))).find("exception"),
            std::string::npos);
}

}  // namespace
}  // namespace heaprec
