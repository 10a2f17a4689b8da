// Symbol demangling for function names shown to people: C++ and Rust.
#pragma once

#include <string>

namespace heaprec::symbolize {

// Demangles a function's symbol name: Rust's legacy ("_ZN4leak4main17h68d97aefc12db3cbE" ->
// "leak::main", without the hash) and v0 ("_RNvCs1234_4leak4main" -> "leak::main", without the
// crate disambiguators) manglings, as rustfilt and Rust's backtraces print them, and Itanium C++
// ("_ZN2ns3FooEv" -> "ns::Foo()"). Returns any other name, or one that fails to demangle,
// unchanged.
std::string Demangle(const std::string& name);

}  // namespace heaprec::symbolize
