// Decoding of pprof files (gzipped or raw profile.proto) into the Profile model, with validation
// of every cross reference so that later code can trust ids and indexes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "profile/profile.h"
#include "profile/profile_error.h"

namespace heaprec::profile {

// Largest profile we agree to hold in memory, compressed or not. A gzip stream that inflates past
// it is rejected.
inline constexpr size_t kMaxProfileBytes = size_t{1} << 30;  // 1 GiB

// Default budget for the decoded Profile. Bounding the input is not enough: protobuf is compact
// and the model is not (a 2-byte empty sample becomes a 72-byte Sample, a string referenced by
// many entries is copied into each), so a 64 KiB gzip file could otherwise take gigabytes. The
// decoder charges what it allocates (vector capacity x element size, string bytes beyond the
// small-string buffer, a per-block overhead, the id indexes used for validation) before
// allocating it, and gives up when the total would pass the budget; the charge is within about
// 10% of the heap really used (tests/profile/decode_budget_test.cc).
//
// Why 2 GiB: real profiles decode to 5-10x their raw protobuf size (heaprec's own, in
// fuzz/corpus/pprof), so this admits profiles of a few hundred MiB of protobuf, far beyond what
// heaprec writes. Yet a hostile file then costs one `heaprec report`/`symbolize` process at most
// about 4 GiB (this budget, plus the file and its inflated copy, each up to kMaxProfileBytes), and
// two such tests side by side on a 2-core CI machine (ctest -j2) about 8 GiB; a 4 GiB budget
// would make that 6 and 12 GiB, more than the CI machines are meant to give a test run.
inline constexpr size_t kMaxDecodedProfileBytes = size_t{2} << 30;  // 2 GiB

struct ReadOptions {
  size_t max_decompressed_bytes = kMaxProfileBytes;
  // Approximate memory the decoded Profile may use; ReadProfile throws ProfileError ("... would
  // need more than N MiB to load") rather than allocate past it.
  size_t max_decoded_bytes = kMaxDecodedProfileBytes;
};

// Decodes `bytes` (gzip or raw protobuf). `source` names the data in error messages. Throws
// ProfileError on anything malformed, inconsistent or too large to load; never crashes on hostile
// input, and never allocates much more than options.max_decoded_bytes for the model.
Profile ReadProfile(std::string_view bytes, std::string_view source = "<memory>",
                    const ReadOptions& options = {});

// Reads and decodes the file at `path`; errors name the path.
Profile ReadProfileFile(const std::string& path, const ReadOptions& options = {});

// A profile read to have its tables rewritten and nothing else (symbolization adds lines and
// functions to the locations; samples, sample types and comments stay): its samples, most of a
// large profile, are checked as ReadProfile checks them but stay encoded, to be written back byte
// for byte by EncodeProfile(const RewritableProfile&). Decoding and encoding each sample took most
// of `heaprec run`'s time at the end of an exact-mode run.
struct RewritableProfile {
  Profile tables;                    // everything but the samples: tables.samples is empty
  std::string encoded_samples;       // the Profile.sample fields as read, tag and length included
  std::vector<std::string> strings;  // the string table as read: the samples' labels index it
};

// As ReadProfile, but keeping the samples encoded. It rejects every malformed input ReadProfile
// rejects (for an input with several problems it may name another one), and needs less memory:
// a profile too large for ReadProfile's budget may load this way.
RewritableProfile ReadRewritableProfile(std::string_view bytes,
                                        std::string_view source = "<memory>",
                                        const ReadOptions& options = {});
RewritableProfile ReadRewritableProfileFile(const std::string& path,
                                            const ReadOptions& options = {});

}  // namespace heaprec::profile
