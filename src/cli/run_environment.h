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
// without running anything.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace heaprec::cli {

struct RunOptions {
  bool ruby = false;            // --ruby: profile Ruby objects through heaprec/autorun
  std::string sample_interval;  // native only
  std::string sample_every;     // Ruby only
  std::string output;           // the profile path template
  std::string dump_interval;
  std::string dump_signal;  // native only
  std::string unwind;       // native only
  std::string max_depth;
  std::string seed;
  bool no_follow = false;  // native only
  bool symbolize = true;
  size_t top = 10;
  std::vector<std::string> command;
};

// Why the options do not go together, in one line ("" when they do): --sample-every without --ruby,
// or an option only libheaprec.so reads (--sample-interval, --unwind, --dump-signal, --no-follow)
// with --ruby.
std::string CheckRunMode(const RunOptions& options);

// The directory that holds heaprec/autorun.rb: `override_directory` ($HEAPREC_RUBY_LIB) when set
// and not empty, else lib/ruby beside the lib/ directory of `executable` (<prefix>/bin/heaprec ->
// <prefix>/lib/ruby, in the build tree as in an installed prefix). Absolute.
std::string RubyLibraryDirectory(const std::string& executable, const char* override_directory);

// Whether `directory` holds heaprec/autorun.rb.
bool HasRubyAutorun(const std::string& directory);

using EnvironmentChanges = std::vector<std::pair<std::string, std::string>>;

// The variables to set in the program's environment, in order. `library` is libheaprec.so, or with
// --ruby the Ruby library directory. LD_PRELOAD (native), RUBYLIB and RUBYOPT (Ruby) keep their
// current values, looked up with `current`, after heaprec's entry. A relative output template is
// made absolute, so that it does not depend on where the program changes directory to.
EnvironmentChanges RunEnvironment(const RunOptions& options, const std::string& library,
                                  const std::string& manifest,
                                  const std::function<const char*(const char*)>& current);

}  // namespace heaprec::cli
