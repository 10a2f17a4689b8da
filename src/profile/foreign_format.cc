// Recognition of files that are not heap profiles. Each format is identified by what its own
// writer puts first:
//   heaptrack   zstd (heaptrack 1.2 and later) or gzip data whose text starts with the version
//               line "v HEAPTRACK_VERSION FILE_FORMAT_VERSION", both in hex ("v 10400 3")
//   jemalloc    "heap_v2/SAMPLE_PERIOD" (prof_dump, read by jeprof)
//   gperftools  "heap profile: " (HeapProfileTable; Go's legacy text heap profile shares it)
//   zstd        the frame magic 28 b5 2f fd (nothing heaprec reads, whatever it holds; only a
//               heaptrack line inside changes the advice)
//   ELF         7f 'E' 'L' 'F': the program itself, given where its profile was meant
#include "profile/foreign_format.h"

#include <zstd.h>

#include <algorithm>
#include <memory>

#include "profile/sampling_error.h"

namespace heaprec::profile {
namespace {

constexpr std::string_view kZstdMagic = "\x28\xb5\x2f\xfd";
constexpr std::string_view kElfMagic = "\x7f\x45\x4c\x46";  // 7f E L F
// Enough of the start of a file to recognize it.
constexpr size_t kPrefixBytes = 4096;
constexpr size_t kTextCheckBytes = 512;
// Longest quote of a text file's first line in its message.
constexpr size_t kQuoteBytes = 60;
// Window a zstd frame may ask for while we read its first KiB (16 MiB; heaptrack's frames use far
// less): a hostile header then cannot make the decoder allocate its default maximum of 128 MiB.
constexpr int kZstdWindowLogMax = 24;

constexpr char kHeaptrack[] =
    "is a heaptrack recording; open it with heaptrack_print or heaptrack_gui, or profile the "
    "program with heaprec run";

// The first up to `size` bytes `bytes` decompresses to; whatever came out before an error or the
// end of the input (a recording still being written ends mid-frame).
std::string ZstdPrefix(std::string_view bytes, size_t size) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) return {};
  ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, kZstdWindowLogMax);
  std::string out(size, '\0');
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  while (o.pos < o.size && in.pos < in.size) {
    size_t ret = ZSTD_decompressStream(ctx.get(), &o, &in);
    if (ZSTD_isError(ret) || ret == 0) break;  // an error, or the end of the (only) frame
  }
  out.resize(o.pos);
  return out;
}

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Skips one or more hex digits at `pos`; false if there are none.
bool SkipHex(std::string_view s, size_t& pos) {
  size_t start = pos;
  while (pos < s.size() && IsHex(s[pos])) ++pos;
  return pos > start;
}

// heaptrack's first line: "v " HEX " " HEX "\n".
bool IsHeaptrackText(std::string_view s) {
  size_t pos = 2;
  return s.substr(0, 2) == "v " && SkipHex(s, pos) && pos < s.size() && s[pos++] == ' ' &&
         SkipHex(s, pos) && pos < s.size() && s[pos] == '\n';
}

// The length of the UTF-8 sequence that starts with `lead`, or 0 if `lead` cannot start one.
size_t Utf8SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

std::string ListSampleTypes(const Profile& p) {
  std::string list;
  for (const ValueType& vt : p.sample_types) {
    list += (list.empty() ? "" : ", ") + vt.type + "/" + vt.unit;
  }
  return list;
}

bool HasSampleType(const Profile& p, std::string_view type) {
  return std::any_of(p.sample_types.begin(), p.sample_types.end(),
                     [&](const ValueType& vt) { return vt.type == type; });
}

}  // namespace

std::string RecognizeForeignData(std::string_view bytes) {
  if (bytes.substr(0, kZstdMagic.size()) == kZstdMagic) {
    if (IsHeaptrackText(ZstdPrefix(bytes, kPrefixBytes))) return kHeaptrack;
    return "is zstd-compressed, not gzip; if it holds a pprof profile, decompress it with unzstd "
           "first (heaprec reads pprof heap profiles, gzipped or not)";
  }
  if (bytes.substr(0, kElfMagic.size()) == kElfMagic) {
    return "is an ELF binary (a program or a library), not a profile; to profile a program, run "
           "it with heaprec run -- PROGRAM";
  }
  if (IsHeaptrackText(bytes.substr(0, kPrefixBytes))) return kHeaptrack;
  if (bytes.starts_with("heap_v2/")) {
    return "is a jemalloc heap profile; read it with jeprof, or profile the program with heaprec "
           "run";
  }
  if (bytes.starts_with("heap profile:")) {
    return "is a heap profile in gperftools' text format (tcmalloc's, or an old Go one); read it "
           "with pprof, or profile the program with heaprec run";
  }
  return {};
}

bool LooksLikeText(std::string_view bytes) {
  std::string_view head = bytes.substr(0, kTextCheckBytes);
  if (head.empty()) return false;
  for (size_t i = 0; i < head.size();) {
    auto c = static_cast<unsigned char>(head[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') return false;
    if (c == 0x7f) return false;
    size_t length = Utf8SequenceLength(c);
    if (length == 0) return false;
    // A sequence cut off by the end of the window still counts as text.
    for (size_t k = 1; k < length && i + k < head.size(); ++k) {
      if ((static_cast<unsigned char>(head[i + k]) & 0xc0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

std::string DescribeText(std::string_view bytes, bool gzipped) {
  std::string_view line = bytes.substr(0, bytes.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  bool cut = line.size() > kQuoteBytes;
  if (cut) {
    line = line.substr(0, kQuoteBytes);
    // Not in the middle of a UTF-8 sequence: drop the last one if the cut left it incomplete.
    size_t start = line.size();
    while (start > 0 && (static_cast<unsigned char>(line[start - 1]) & 0xc0) == 0x80) --start;
    size_t end = line.size();
    if (start > 0 &&
        start - 1 + Utf8SequenceLength(static_cast<unsigned char>(line[start - 1])) > line.size()) {
      end = start - 1;
    }
    line = line.substr(0, end);
  }
  std::string quote;
  for (char c : line) quote += c == '\t' || c == '\f' || c == '\r' ? ' ' : c;  // plain spaces
  std::string text =
      gzipped ? "is gzip-compressed text, not a profile" : "is a text file, not a profile";
  if (!quote.empty()) text += " (it starts with \"" + quote + (cut ? "...\")" : "\")");
  return text + "; " + kWhatHeaprecReads;
}

std::string RecognizeForeignProfile(const Profile& p) {
  for (const ValueType& vt : p.sample_types) {
    if (IsByteCountType(vt.type) || IsObjectCountType(vt.type)) return {};
  }
  const char* kind = nullptr;
  if (HasSampleType(p, "cpu") || p.period_type.type == "cpu") {
    kind = "a CPU profile";
  } else if (HasSampleType(p, "contentions") || HasSampleType(p, "delay")) {
    kind = "a contention profile, Go's block or mutex profile";
  } else if (HasSampleType(p, "goroutine")) {
    kind = "a goroutine profile";
  } else {
    return {};
  }
  return std::string("is ") + kind + " (sample types " + ListSampleTypes(p) +
         "), not a heap profile; read it with pprof, or profile the program's heap with heaprec "
         "run";
}

}  // namespace heaprec::profile
