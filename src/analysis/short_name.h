// The short form of a demangled C++ or Rust name, as pprof and jeprof show functions: without
// parameter lists, template arguments, return types, ABI tags or qualifiers
//   "std::__detail::_MakeUniq<char []>::__array std::make_unique<char []>(unsigned long)"
//     -> "std::make_unique"
//   "(anonymous namespace)::Cache<int, std::string>::Get(int const&) const"
//     -> "(anonymous namespace)::Cache::Get"
//   "<alloc::vec::Vec<T> as core::clone::Clone>::clone"
//     -> "<alloc::vec::Vec as core::clone::Clone>::clone"
// Lambda and closure names ("{lambda(int)#1}", "{{closure}}") and operator names ("operator<<",
// "operator()", "operator new[]", "operator bool") are kept whole; a templated operator's
// arguments go ("std::__cxx11::basic_string<...> std::operator+<char, ...>(...)" ->
// "std::operator+"), and so do GCC's clone suffixes (".isra.0", "[clone .cold]"). A name local to a
// function keeps the function's name without its parameters:
//   "app::Process(std::vector<int> const&)::{lambda(int)#1}::operator()(int) const"
//     -> "app::Process::{lambda(int)#1}::operator()"
#pragma once

#include <string>
#include <string_view>

namespace heaprec::analysis {

std::string ShortName(std::string_view demangled);

// Whether `system_name` is a mangled C++ (Itanium ABI) or Rust (legacy or v0) symbol: the names
// whose demangled form ShortName shortens. Other names (C, Go, Ruby) are shown as they are.
bool IsMangledName(std::string_view system_name);

}  // namespace heaprec::analysis
