// Small text helpers shared by the report, flame-graph and leak outputs.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace heaprec::cli {

// "0x4011f0": how an unsymbolized address is shown.
inline std::string HexAddress(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
  return buffer;
}

// The last component of a path ("/usr/lib/libc.so.6" -> "libc.so.6").
inline std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace heaprec::cli
