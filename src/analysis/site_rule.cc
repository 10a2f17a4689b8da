#include "analysis/site_rule.h"

#include <stdexcept>

#include "schema/runtime_frames.h"

namespace heaprec::analysis {
namespace {

std::regex Compile(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("'" + pattern + "' is not a valid regular expression");
  }
}

bool AnyMatches(const std::vector<std::regex>& patterns, const std::string& text) {
  for (const std::regex& pattern : patterns) {
    if (std::regex_search(text, pattern)) return true;
  }
  return false;
}

}  // namespace

SiteRule::SiteRule() : SiteRule(/*with_defaults=*/true) {}

SiteRule::SiteRule(bool with_defaults) : defaults_(with_defaults) {
  if (!with_defaults) return;
  // Whole names, as pprof matches the drop_frames that carry the same pattern.
  skip_.push_back(Compile("^(?:" + std::string(schema::kRuntimeFrames) + ")$"));
  libraries_.push_back(Compile(schema::kRuntimeLibraries));
}

SiteRule SiteRule::WithoutDefaults() { return SiteRule(/*with_defaults=*/false); }

void SiteRule::AddSkip(const std::string& regex) { skip_.push_back(Compile(regex)); }

void SiteRule::AddKeep(const std::string& regex) { keep_.push_back(Compile(regex)); }

bool SiteRule::Skips(const std::string& name, const std::string& library,
                     bool ruby_c_method) const {
  bool runtime = (ruby_c_method && defaults_) || AnyMatches(skip_, name) ||
                 (!library.empty() && AnyMatches(libraries_, library));
  return runtime && !AnyMatches(keep_, name);
}

}  // namespace heaprec::analysis
