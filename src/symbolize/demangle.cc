// Rust names through GNU libiberty's demangler (the one binutils and gdb use, which knows both
// Rust manglings); C++ names through the C++ runtime's own, so that they read as the toolchain
// prints them (libiberty's C++ demangler is the same code: GCC 12's runtime and libiberty 20230104
// spell all 5,893 C++ names of heaprec and libstdc++ alike, but the runtime is the reference).
#include "symbolize/demangle.h"

#include <cxxabi.h>
// libiberty.h declares basename() unless told that the C library does, and its declaration
// conflicts with glibc's C++ one.
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>

namespace heaprec::symbolize {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using MallocedString = std::unique_ptr<char, FreeDeleter>;

}  // namespace

std::string Demangle(const std::string& name) {
  // Rust first, as libiberty's own automatic mode does: a legacy Rust name is also a valid C++
  // name ("_ZN4leak4main17h68d97aefc12db3cbE" would read "leak::main::h68d97aefc12db3cb"), and
  // rust_demangle takes a legacy name only if its last part is Rust's hash. Without DMGL_VERBOSE
  // it leaves out that hash and v0's crate disambiguators, as people read Rust names; it also
  // drops the ".llvm.NNN" suffix LLVM gives local copies of functions.
  if (name.rfind("_R", 0) == 0 || name.rfind("_ZN", 0) == 0) {
    if (MallocedString rust{rust_demangle(name.c_str(), DMGL_PARAMS | DMGL_ANSI)}) {
      return std::string(rust.get());
    }
  }
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  MallocedString cxx{abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status)};
  if (status != 0 || !cxx) return name;
  return std::string(cxx.get());
}

}  // namespace heaprec::symbolize
