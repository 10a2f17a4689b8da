// What `heaprec run` hands the program: its options, and the environment variables they become.
//
// Native programs get libheaprec.so through LD_PRELOAD. Ruby programs (--ruby) get no preload: the
// Ruby front end is a gem whose file heaprec/autorun.rb starts the profiler when required, so
// heaprec puts the gem's directory on RUBYLIB and -rheaprec/autorun in RUBYOPT. Both are inherited,
// so Ruby processes the program starts (bundle exec, rake, forked workers) are profiled as well.
// Both front ends read the same HEAPREC_* variables (output template, manifest, dump interval,
// seed, max depth), each its own sampling rate: HEAPREC_SAMPLE_INTERVAL (bytes, native) or
// HEAPREC_SAMPLE_EVERY (objects, Ruby).
//
// Kept apart from run_command.cc, which forks and waits, so that tests can check the environment
// (and what heaprec finds out about the program beforehand) without running anything.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace heaprec::cli {

// The HEAPREC_* settings given as `heaprec run` flags, by variable (the rows of
// preload/control/settings.h): the flag's value as given, or "1" for a switch.
using RunSettings = std::map<std::string, std::string>;

struct RunOptions {
  bool ruby = false;   // --ruby: profile Ruby objects through heaprec/autorun
  std::string output;  // -o: the profile path template (HEAPREC_OUTPUT, made absolute)
  RunSettings settings;
  bool symbolize = true;
  bool symbol_cache = true;  // false: --no-cache
  size_t top = 10;
  std::vector<std::string> command;

  // The value given for `variable`, or null when its flag was not given.
  const std::string* Setting(const char* variable) const;
  bool Has(const char* variable) const { return Setting(variable) != nullptr; }
};

// Why the options do not go together, in one line ("" when they do): a setting the chosen front
// end does not read (--sample-every without --ruby; --sample-interval, --unwind, --dump-signal,
// --dump-above, --quiet, --no-follow, --dormant or --http with --ruby), --dormant without
// --dump-signal, or --http-public without --http.
std::string CheckRunMode(const RunOptions& options);

// Why a setting's value is not accepted, in one line naming the flag ("" when all are), by the
// rows' own parsers: the rule the library applies to the variable, checked before the program runs
// for nothing. Also: a non-loopback --http without --http-public, and an output template that is
// empty, too long, or in a directory that is not writable.
std::string CheckRunSettings(const RunOptions& options);

// The directory that holds heaprec/autorun.rb: `override_directory` ($HEAPREC_RUBY_LIB) when set
// and not empty, else lib/ruby beside the lib/ directory of `executable` (<prefix>/bin/heaprec ->
// <prefix>/lib/ruby, in the build tree as in an installed prefix). Absolute.
std::string RubyLibraryDirectory(const std::string& executable, const char* override_directory);

// Whether `directory` holds heaprec/autorun.rb.
bool HasRubyAutorun(const std::string& directory);

using EnvironmentChanges = std::vector<std::pair<std::string, std::string>>;

// The variables to set in the program's environment, in order. `library` is libheaprec.so, or with
// --ruby the Ruby library directory; with --ruby, `native_library` (libheaprec.so, or "" for none)
// is preloaded in runtime mode, so that the Ruby front end samples native bytes
// (include/heaprec/runtime.h). LD_PRELOAD, RUBYLIB and RUBYOPT keep their current values, looked up
// with `current`, after heaprec's entry. A relative output template is made absolute, so that it
// does not depend on where the program changes directory to.
EnvironmentChanges RunEnvironment(const RunOptions& options, const std::string& library,
                                  const std::string& manifest,
                                  const std::function<const char*(const char*)>& current,
                                  const std::string& native_library = "");

// The file execvp(3) would run for `name`: `name` itself when it holds a slash, else the first
// executable regular file called `name` in the directories of `search_path` ($PATH: an empty entry
// is the current directory; nullptr means the system default, as execvp does). "" when there is
// none, in which case starting the program fails and says why.
std::string FindProgram(const std::string& name, const char* search_path);

// Whether `file` is an ELF executable that the kernel starts without a program interpreter (no
// PT_INTERP): the dynamic loader, which is what honours LD_PRELOAD, never runs. That is a static
// executable, static-pie included. False for anything else (scripts, unreadable or malformed
// files): those are left to exec to judge.
bool IsStaticExecutable(const std::string& file);

}  // namespace heaprec::cli
