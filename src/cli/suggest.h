// "Did you mean ...?": the closest of a few known names to what the user typed, for the errors on
// an unknown command or option.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heaprec::cli {

// Edits (insertions, deletions, substitutions, swaps of two adjacent characters) that turn `a`
// into `b`: the optimal string alignment distance, so that "tpo" is one edit from "top".
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `typed`, or nothing when none is close enough to be what was meant: at
// most one edit for words up to 5 characters, two up to 8, three beyond. Leading dashes are not
// compared (so "-top" finds "--top"), and one-letter words get no suggestion (every one-letter
// option is one edit from every other). Ties go to the earlier candidate.
std::optional<std::string> ClosestMatch(std::string_view typed,
                                        const std::vector<std::string>& candidates);

}  // namespace heaprec::cli
