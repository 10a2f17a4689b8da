// Demangling through the C++ runtime's own demangler, so names match what the toolchain prints.
#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace heaprec::symbolize {

std::string Demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

}  // namespace heaprec::symbolize
