// The allocation-site rule: which frames of a stack are not the user's own code, so that a sample
// is charged to the first frame, from the leaf, that is. By default those are the frames that
// schema/runtime_frames.h names (the allocator, the C and C++ runtimes, the C++ and Rust standard
// libraries, heaprec) and every frame of the runtime libraries it lists; in a Ruby profile, also
// the methods written in C (they have no source file) and the native frames of its native byte
// samples, so `Array#push` and the malloc under `String#*` are charged to the Ruby line that
// called them. Users add patterns to skip (--skip-frames) and patterns that are always
// the user's (--keep-frames, which win, as pprof's keep_frames do); --all-frames leaves the
// defaults out.
#pragma once

#include <regex>
#include <string>
#include <vector>

namespace heaprec::analysis {

class SiteRule {
 public:
  // heaprec's default rule.
  SiteRule();
  // Without the defaults: no frame is skipped but those the user's patterns name.
  static SiteRule WithoutDefaults();

  // User patterns, found anywhere in a name (anchor them with ^ and $ to match whole names).
  // Throw std::invalid_argument naming the pattern when it is not a valid regular expression.
  void AddSkip(const std::string& regex);
  void AddKeep(const std::string& regex);

  // Whether a frame is skipped: the function `name` (as ShortName gives it, or as the profile
  // names it), whose code is in the mapped file with base name `library` ("" if unknown), and
  // which is a Ruby method written in C (or a native frame of a Ruby profile) or not.
  bool Skips(const std::string& name, const std::string& library, bool ruby_c_method) const;
  // Whether the default patterns are in (not WithoutDefaults).
  bool defaults() const { return defaults_; }

 private:
  explicit SiteRule(bool with_defaults);  // the defaults are compiled only when asked for

  bool defaults_ = true;
  std::vector<std::regex> skip_;
  std::vector<std::regex> keep_;
  std::vector<std::regex> libraries_;
};

}  // namespace heaprec::analysis
