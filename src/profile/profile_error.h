// The single exception type for unreadable, invalid or unwritable profiles. Its message is one
// line that names the file and the problem, suitable for printing as is.
#pragma once

#include <stdexcept>
#include <string>

namespace heaprec::profile {

class ProfileError : public std::runtime_error {
 public:
  explicit ProfileError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace heaprec::profile
