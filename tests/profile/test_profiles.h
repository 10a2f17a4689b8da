// Profiles and helpers shared by the profile, report and CLI tests.
#pragma once

#include <string>

#include "profile/profile.h"

namespace heaprec::testing {

// A profile shaped like the preload library's output, with every model field set to a
// non-default value so that round trips exercise all of them.
Profile MakeFullProfile();

// A small symbolized profile with known totals, for the report and pprof tests. inuse_space:
// Alloc 3 MiB flat; Inner (inlined into Build) 1 MiB; main 512 KiB (recursive sample); one
// unsymbolized address 0x1234 in libfoo.so 512 KiB. Total 5 MiB in 4 samples.
Profile MakeReportProfile();

// A fresh private directory under the test temp dir.
std::string MakeTempDir();

// Runs `command` through the shell; returns its exit status and captures stdout+stderr.
int RunCommand(const std::string& command, std::string* output);

// Single-quotes `s` for the shell.
std::string ShellQuote(const std::string& s);

}  // namespace heaprec::testing
