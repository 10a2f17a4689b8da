// C++ symbol demangling for function names shown to people.
#pragma once

#include <string>

namespace heaprec::symbolize {

// Demangles an Itanium C++ ABI name ("_ZN2ns3FooEv" -> "ns::Foo()"); returns any other name, or
// one that fails to demangle, unchanged.
std::string Demangle(const std::string& name);

}  // namespace heaprec::symbolize
