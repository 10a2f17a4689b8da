// Profiles and helpers shared by the tests of the CLI side (profile, symbolize, analysis, render,
// cli).
#pragma once

#include <string>

#include "profile/profile.h"

namespace heaprec::test_support {

using namespace ::heaprec::profile;

// An empty heap profile with the native profiler's header: the four Go heap sample types,
// period_type space/bytes with `period`, default sample type inuse_space.
Profile MakeNativeHeapProfile(int64_t period);

// A profile shaped like the preload library's output, with every model field set to a
// non-default value so that round trips exercise all of them.
Profile MakeFullProfile();

// A small symbolized profile with known totals, for the report and pprof tests. inuse_space:
// Alloc 3 MiB flat; Inner (inlined into Build) 1 MiB; main 512 KiB (recursive sample); one
// unsymbolized address 0x1234 in libfoo.so 512 KiB. Total 5 MiB in 4 samples.
Profile MakeReportProfile();

// A profile shaped like the Ruby front end's output: inuse_objects/inuse_space only, period_type
// objects/count with period `sample_every` (each value a multiple of it, as per-object sampling
// gives), locations without mapping or address holding one line each, functions without start
// lines, and the labels bytes, class, gc_age and age_ns (2 s). Stacks (leaf first):
//
//   A  block in Cache#fill cache.rb:12 < Integer#times (a C method: no file, line 0)
//        < Cache#fill cache.rb:11 < <main> app.rb:5      300 String objects of 40 B
//   B  Cache#fill cache.rb:15 < <main> app.rb:5          200 Array objects of 60 B
//   C  <main> app.rb:7                                   100 Hash objects of 1000 B
//   D  as A                                              100 Symbol objects of 40 B
//
// inuse_space: 128000 in total; flat <main> 100000, block in Cache#fill 16000, Cache#fill 12000,
// Integer#times 0. inuse_objects: 700. These are the counts at sample_every = 100 (3, 2, 1 and 1
// sampled objects); at another period they scale with it (3·N, 2·N, ...).
Profile MakeRubyProfile(int64_t sample_every = 100);

// A CPU profile shaped like Go's runtime/pprof output: sample types samples/count and
// cpu/nanoseconds, period 10 ms of cpu/nanoseconds; one function main.spin spin.go:7 with 3
// samples (30 ms). A valid pprof profile that is not a heap profile.
Profile MakeGoCpuProfile();

// Writes `profile`, encoded as profile/pprof_writer.h encodes it (gzipped unless `gzip` is false),
// to `path` with plain stdio: for the tests of the layers below render/, whose output_file.h is
// the commands' atomic file writer.
void WriteEncodedProfile(const Profile& profile, const std::string& path, bool gzip = true);

// A fresh private directory under the test temp dir.
std::string MakeTempDir();

// Runs `command` through the shell, without DEBUGINFOD_URLS; returns its exit status and captures
// stdout+stderr.
int RunCommand(const std::string& command, std::string* output);

// Single-quotes `s` for the shell.
std::string ShellQuote(const std::string& s);

// Parses `json` with Python's json module, as a user's script would, and runs `script` on it (the
// document is `d`; `script` is Python without single quotes, e.g. "print(d[\"total\"])"). Returns
// python3's exit status; *output gets what it printed.
int ReadJsonWithPython(const std::string& json, const std::string& script, std::string* output);

}  // namespace heaprec::test_support
