#include "cli/command_errors.h"

#include <exception>
#include <iostream>

#include "analysis/profile_view.h"

namespace heaprec::cli {

int RunReportingErrors(const char* command, const std::function<int()>& work) {
  try {
    return work();
  } catch (const analysis::UnknownSampleIndexError& e) {
    std::cerr << "heaprec " << command << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    // profile::ProfileError, analysis::IncompatibleProfilesError, base::FileError, and the
    // std::runtime_error of a missing input: each message is one line naming the file.
    std::cerr << "heaprec " << command << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace heaprec::cli
