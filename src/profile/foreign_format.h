// Recognizes, by content, the files people hand heaprec that are not heap profiles in pprof format:
// other profilers' files (heaptrack, jemalloc, gperftools/tcmalloc), a pprof profile of something
// other than the heap (a Go CPU profile), text, and zstd data. The reader (pprof_reader.cc) turns
// a match into its one-line error, so that the user learns what the file is and what to do with it
// instead of how the protobuf decoder failed on it.
//
// Each function returns the rest of a sentence whose subject is the file ("is a heaptrack
// recording; open it with ..."), or "" when the content is not recognized.
#pragma once

#include <string>
#include <string_view>

#include "profile/profile.h"

namespace heaprec::profile {

// What heaprec reads, for the end of the messages below and of the reader's own.
inline constexpr char kWhatHeaprecReads[] =
    "heaprec reads pprof heap profiles, such as heaprec run writes";

// `bytes`: a file's content as read, or what its gzip data inflates to. Recognizes heaptrack's
// recordings (zstd-compressed, or the text inside), jemalloc's and gperftools' text heap profiles,
// any other zstd data, and ELF binaries. Reads at most the first few KiB.
std::string RecognizeForeignData(std::string_view bytes);

// True when `bytes` starts like text rather than binary data (no control characters other than
// whitespace in its first 512 bytes): what an HTML error page, a log or a script looks like, and
// what no pprof encoding does.
bool LooksLikeText(std::string_view bytes);

// "is a text file, not a profile (it starts with "..."); heaprec reads ...", for text that
// LooksLikeText; `gzipped`: it was inflated from the file's gzip data.
std::string DescribeText(std::string_view bytes, bool gzipped = false);

// A decoded pprof profile with no heap sample type (inuse_/alloc_ space and objects) whose sample
// types name another kind of profile: CPU (cpu/nanoseconds, Go's and pprof's CPU profiles),
// contention (Go's block and mutex profiles) or goroutines.
std::string RecognizeForeignProfile(const Profile& profile);

}  // namespace heaprec::profile
