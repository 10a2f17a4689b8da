// Fuzzes heaprec::profile::ReadProfile, the decoder behind `heaprec report` and `heaprec
// symbolize`, which read files that may come from anywhere.
//
// Contract checked:
//  - bad input ends in heaprec::profile::ProfileError; any other exception escapes and libFuzzer
//  reports it
//    (uncaught exception -> abort), and crashes, leaks and UB are caught by ASan/UBSan;
//  - a profile that decodes survives a round trip: EncodeProfile (raw and gzipped) then ReadProfile
//    gives back an equal Profile, and encoding that again gives the same bytes;
//  - ReadRewritableProfile (the samples checked but kept encoded) rejects what ReadProfile rejects
//    (but for ReadProfile's memory budget, which it needs less of), accepts what it accepts, and
//    what it reads, written back, is the Profile ReadProfile decoded.
//
// The input is handed over exactly sized (libFuzzer's own heap copy), so ASan sees a read of even
// one byte past its end.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "profile/profile.h"
#include "profile/profile_error.h"

namespace {

// Far below the production caps (1 GiB inflated, 2 GiB decoded) so that gzip bombs and inputs
// that decode into huge models stay inside libFuzzer's RSS limit (with ASan's overhead); small
// enough that an 8 KiB input can reach the decoded-memory limit, so that path is fuzzed too.
constexpr size_t kFuzzMaxDecompressedBytes = size_t{64} << 20;
constexpr size_t kFuzzMaxDecodedBytes = size_t{256} << 20;

[[noreturn]] void Bug(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "pprof_reader_fuzzer: BUG: %s%s%s\n", what, detail.empty() ? "" : ": ",
               detail.c_str());
  std::abort();
}

// Names the first member that differs, so that a round-trip report says where to look.
std::string FirstDifference(const heaprec::profile::Profile& a,
                            const heaprec::profile::Profile& b) {
  auto count = [](const char* what, size_t x, size_t y) {
    return std::string(what) + " (" + std::to_string(x) + " vs " + std::to_string(y) + " entries)";
  };
  if (a.sample_types != b.sample_types) {
    return count("sample_types", a.sample_types.size(), b.sample_types.size());
  }
  if (a.samples != b.samples) return count("samples", a.samples.size(), b.samples.size());
  if (a.mappings != b.mappings) return count("mappings", a.mappings.size(), b.mappings.size());
  if (a.locations != b.locations) return count("locations", a.locations.size(), b.locations.size());
  if (a.functions != b.functions) return count("functions", a.functions.size(), b.functions.size());
  if (a.comments != b.comments) return count("comments", a.comments.size(), b.comments.size());
  if (a.drop_frames != b.drop_frames) return "drop_frames";
  if (a.keep_frames != b.keep_frames) return "keep_frames";
  if (a.time_nanos != b.time_nanos) return "time_nanos";
  if (a.duration_nanos != b.duration_nanos) return "duration_nanos";
  if (a.period_type != b.period_type) return "period_type";
  if (a.period != b.period) return "period";
  if (a.default_sample_type != b.default_sample_type) return "default_sample_type";
  return "no member differs";
}

heaprec::profile::Profile ReadBack(const std::string& encoded, const char* source,
                                   const heaprec::profile::ReadOptions& options) {
  try {
    return heaprec::profile::ReadProfile(encoded, source, options);
  } catch (const heaprec::profile::ProfileError& e) {
    Bug("a profile written by EncodeProfile does not read back", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  heaprec::profile::ReadOptions options;
  options.max_decompressed_bytes = kFuzzMaxDecompressedBytes;
  options.max_decoded_bytes = kFuzzMaxDecodedBytes;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);

  heaprec::profile::RewritableProfile rewritable;
  bool rewritable_read = true;
  try {
    rewritable = heaprec::profile::ReadRewritableProfile(bytes, "fuzz-input", options);
  } catch (const heaprec::profile::ProfileError&) {
    rewritable_read = false;
  }

  heaprec::profile::Profile profile;
  try {
    profile = heaprec::profile::ReadProfile(bytes, "fuzz-input", options);
  } catch (const heaprec::profile::ProfileError& e) {
    if (rewritable_read &&
        std::string(e.what()).find("would need more than") == std::string::npos) {
      Bug("ReadRewritableProfile accepts what ReadProfile rejects", e.what());
    }
    return 0;  // the expected outcome for malformed (or too large) input
  }
  if (!rewritable_read) Bug("ReadRewritableProfile rejects what ReadProfile accepts");
  heaprec::profile::Profile from_rewritable =
      ReadBack(heaprec::profile::EncodeProfile(rewritable, /*gzip=*/false), "rewritable", options);
  if (!(from_rewritable == profile)) {
    Bug("writing back a rewritable profile changed it", FirstDifference(profile, from_rewritable));
  }

  std::string raw = heaprec::profile::EncodeProfile(profile, /*gzip=*/false);
  heaprec::profile::Profile from_raw = ReadBack(raw, "round-trip (raw)", options);
  if (!(from_raw == profile)) {
    Bug("raw round trip changed the profile", FirstDifference(profile, from_raw));
  }
  if (heaprec::profile::EncodeProfile(from_raw, /*gzip=*/false) != raw) {
    Bug("encoding the round-tripped profile gives different bytes");
  }

  std::string gzipped = heaprec::profile::EncodeProfile(profile, /*gzip=*/true);
  heaprec::profile::Profile from_gzip = ReadBack(gzipped, "round-trip (gzip)", options);
  if (!(from_gzip == profile)) {
    Bug("gzip round trip changed the profile", FirstDifference(profile, from_gzip));
  }
  return 0;
}
