#include "cli/run_environment.h"

#include <filesystem>

namespace heaprec::cli {
namespace {

// `first`, then the variable's current value if it has one, joined by `separator`.
std::string Prepend(const std::string& first, const char* current, const char* separator) {
  if (current == nullptr || *current == '\0') return first;
  return first + separator + current;
}

}  // namespace

std::string CheckRunMode(const RunOptions& o) {
  if (!o.ruby) {
    if (!o.sample_every.empty()) {
      return "--sample-every samples Ruby objects and needs --ruby; native programs are sampled "
             "by bytes with --sample-interval";
    }
    return "";
  }
  if (!o.sample_interval.empty()) {
    return "--sample-interval is for native programs; with --ruby, objects are sampled with "
           "--sample-every N (1 = every object)";
  }
  // Read only by libheaprec.so, which --ruby does not load: accepting them would do nothing.
  if (!o.unwind.empty()) return "--unwind is for native programs; Ruby stacks come from the VM";
  if (!o.dump_signal.empty()) return "--dump-signal is for native programs, not with --ruby";
  if (o.no_follow) return "--no-follow is for native programs, not with --ruby";
  return "";
}

std::string RubyLibraryDirectory(const std::string& executable, const char* override_directory) {
  std::filesystem::path directory;
  if (override_directory != nullptr && *override_directory != '\0') {
    directory = override_directory;
  } else {
    directory = std::filesystem::path(executable).parent_path() / ".." / "lib" / "ruby";
  }
  return std::filesystem::absolute(directory).lexically_normal().string();
}

bool HasRubyAutorun(const std::string& directory) {
  std::error_code ec;
  return std::filesystem::is_regular_file(
      std::filesystem::path(directory) / "heaprec" / "autorun.rb", ec);
}

EnvironmentChanges RunEnvironment(const RunOptions& o, const std::string& library,
                                  const std::string& manifest,
                                  const std::function<const char*(const char*)>& current) {
  EnvironmentChanges env;
  if (o.ruby) {
    env.emplace_back("RUBYLIB", Prepend(library, current("RUBYLIB"), ":"));
    env.emplace_back("RUBYOPT", Prepend("-rheaprec/autorun", current("RUBYOPT"), " "));
  } else {
    env.emplace_back("LD_PRELOAD", Prepend(library, current("LD_PRELOAD"), ":"));
  }
  std::filesystem::path output = o.output;
  if (output.is_relative()) output = std::filesystem::current_path() / output;
  env.emplace_back("HEAPREC_OUTPUT", output.string());
  env.emplace_back("HEAPREC_MANIFEST", manifest);
  auto set_if = [&env](const char* name, const std::string& value) {
    if (!value.empty()) env.emplace_back(name, value);
  };
  if (o.ruby) {
    set_if("HEAPREC_SAMPLE_EVERY", o.sample_every);
  } else {
    set_if("HEAPREC_SAMPLE_INTERVAL", o.sample_interval);
  }
  set_if("HEAPREC_DUMP_INTERVAL", o.dump_interval);
  if (!o.ruby) {
    set_if("HEAPREC_DUMP_SIGNAL", o.dump_signal);
    set_if("HEAPREC_UNWIND", o.unwind);
  }
  set_if("HEAPREC_MAX_DEPTH", o.max_depth);
  set_if("HEAPREC_SEED", o.seed);
  return env;
}

}  // namespace heaprec::cli
