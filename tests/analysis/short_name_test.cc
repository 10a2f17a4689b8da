// Short names (analysis/short_name.h) of real demangled names: C++ names as c++filt prints the
// symbols of GCC 12 -O2 binaries and of libstdc++.so.6 (templates, lambdas, operators, anonymous
// namespaces, ABI tags, clones, conversion operators, return types, std::function handlers, names
// local to functions, literal operators), and Rust names as demangled from rustc 1.95's legacy and
// v0 symbols; and which system names are mangled.
#include "analysis/short_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace heaprec::analysis {
namespace {

struct Case {
  const char* demangled;
  const char* expected;
};

void ExpectShortNames(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(ShortName(c.demangled), c.expected) << c.demangled;
  }
}

TEST(ShortNameTest, CxxFunctionsAndMethods) {
  ExpectShortNames({
      {"Cold(int)", "Cold"},
      {"Cold(int) [clone .cold]", "Cold"},
      {"Split(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
       "const&) [clone .cold]",
       "Split"},
      {"(anonymous namespace)::Describe(int)", "(anonymous namespace)::Describe"},
      {"(anonymous namespace)::Handler::Handle(std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > const&) [clone .constprop.0] [clone "
       ".isra.0]",
       "(anonymous namespace)::Handler::Handle"},
      {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > >::GetOrCreate(int const&)",
       "thumbs::Cache::GetOrCreate"},
      {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > >::size() const",
       "thumbs::Cache::size"},
      {"app::Store::Store()", "app::Store::Store"},
      {"app::Store::~Store()", "app::Store::~Store"},
      {"app::Store::Put(int) & [clone .isra.0]", "app::Store::Put"},
      {"app::Run(std::function<void ()> const&)", "app::Run"},
      {"std::__cxx11::to_string(int)", "std::__cxx11::to_string"},
      {"std::_Function_base::~_Function_base()", "std::_Function_base::~_Function_base"},
      // Thunks and clones that name a function.
      {"transaction clone for std::logic_error::what() const", "std::logic_error::what"},
      {"non-virtual thunk to app::Derived::Get()", "app::Derived::Get"},
  });
}

TEST(ShortNameTest, CxxTemplatesReturnTypesAndAbiTags) {
  ExpectShortNames({
      // Function templates print their return type first.
      {"std::unique_ptr<char [], std::default_delete<char []> > thumbs::MakeBuffer<char>(unsigned "
       "long)",
       "thumbs::MakeBuffer"},
      {"void app::Store::Emplace<int, long>(int&&, long&&)", "app::Store::Emplace"},
      {"decltype ({parm#1}+{parm#1}) app::Twice<int>(int)", "app::Twice"},
      {"std::__detail::_MakeUniq<char []>::__array std::make_unique<char []>(unsigned long)",
       "std::make_unique"},
      {"void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(__gnu_cxx::__normal_"
       "iterator<int*, std::vector<int, std::allocator<int> > >, int&&)",
       "std::vector::_M_realloc_insert"},
      {"void std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > > >::_M_realloc_insert<std::__cxx11::basic_"
       "string<char, std::char_traits<char>, std::allocator<char> > const&>(__gnu_cxx::__normal_"
       "iterator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >*, "
       "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > > > >, std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       "std::vector::_M_realloc_insert"},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::basic_string<std::allocator<char> >(char const*, std::allocator<char> const&)",
       "std::__cxx11::basic_string::basic_string"},
      {"std::_Rb_tree<int, std::pair<int const, std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > >, std::_Select1st<std::pair<int const, "
       "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >, "
       "std::less<int>, std::allocator<std::pair<int const, std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > > > "
       ">::_M_erase(std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > > >*) [clone .isra.0]",
       "std::_Rb_tree::_M_erase"},
      {"std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > "
       ">::_M_run()",
       "std::thread::_State_impl::_M_run"},
      // ABI tags, on the function and on a class.
      {"app::Format[abi:cxx11](app::Point const&)", "app::Format"},
      {"std::locale::name[abi:cxx11]() const", "std::locale::name"},
      {"std::ios_base::failure[abi:cxx11]::what() const", "std::ios_base::failure::what"},
  });
}

TEST(ShortNameTest, CxxOperators) {
  ExpectShortNames({
      {"operator new(unsigned long)", "operator new"},
      {"operator delete[](void*, std::nothrow_t const&)", "operator delete[]"},
      {"operator delete(void*, unsigned long)", "operator delete"},
      {"app::Store::operator new(unsigned long)", "app::Store::operator new"},
      {"app::Store::operator delete(void*)", "app::Store::operator delete"},
      {"app::Store::operator->() [clone .isra.0]", "app::Store::operator->"},
      {"app::Store::operator==(app::Store const&) const [clone .isra.0]", "app::Store::operator=="},
      {"app::operator<<(std::basic_ostream<char, std::char_traits<char> >&, app::Point const&)",
       "app::operator<<"},
      // A template operator: its arguments follow after a space.
      {"std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
       "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char "
       "const*)",
       "std::operator<<"},
      // A templated free operator, whose arguments follow its symbol without a space.
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
       "std::operator+<char, std::char_traits<char>, std::allocator<char> "
       ">(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&, "
       "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)",
       "std::operator+"},
      {"std::basic_istream<char, std::char_traits<char> >& std::operator>><char, "
       "std::char_traits<char> >(std::basic_istream<char, std::char_traits<char> >&, char&)",
       "std::operator>>"},
      {"bool std::operator==<char>(std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&, char const*)",
       "std::operator=="},
      {"app::X::operator->*(int)", "app::X::operator->*"},
      {"app::X::operator<=>(app::X const&) const", "app::X::operator<=>"},
      {"thumbs::Cache<std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> >, std::vector<int, std::allocator<int> > "
       ">::operator[](std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       "thumbs::Cache::operator[]"},
      {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > >::operator()(int) const",
       "thumbs::Cache::operator()"},
      {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > >::operator<(thumbs::Cache<int, std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > > const&) const",
       "thumbs::Cache::operator<"},
      // Conversion operators.
      {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > >::operator bool() const",
       "thumbs::Cache::operator bool"},
      {"std::istream::sentry::operator bool() const", "std::istream::sentry::operator bool"},
      {"std::string::operator std::basic_string_view<char, std::char_traits<char> >() const",
       "std::string::operator std::basic_string_view"},
  });
}

TEST(ShortNameTest, CxxLambdasAndStdFunctionHandlers) {
  ExpectShortNames({
      {"main::{lambda(int)#1}::operator()(int) const [clone .constprop.0] [clone .isra.0]",
       "main::{lambda(int)#1}::operator()"},
      {"main::{lambda()#2}::operator()() const [clone .isra.0]", "main::{lambda()#2}::operator()"},
      {"std::_Function_handler<int (int), main::{lambda(int)#1}>::_M_invoke(std::_Any_data "
       "const&, int&&)",
       "std::_Function_handler::_M_invoke"},
      {"std::_Function_handler<void (std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&), main::{lambda(std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > const&)#2}>::_M_manager(std::_Any_data&, "
       "std::_Any_data const&, std::_Manager_operation)",
       "std::_Function_handler::_M_manager"},
      {"std::_Function_handler<void (int), app::Process[abi:cxx11](std::vector<int, "
       "std::allocator<int> > const&)::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)",
       "std::_Function_handler::_M_invoke"},
  });
}

// A lambda or class local to a function with parameters is a name of its own, not the function's:
// the enclosing function's parameters and qualifiers go, the local name stays.
TEST(ShortNameTest, CxxNamesLocalToAFunction) {
  ExpectShortNames({
      {"app::Process[abi:cxx11](std::vector<int, std::allocator<int> > "
       "const&)::{lambda(int)#1}::operator()(int) const [clone .isra.0]",
       "app::Process::{lambda(int)#1}::operator()"},
      {"app::Pick(int)::{lambda(int)#1}::_FUN(int)", "app::Pick::{lambda(int)#1}::_FUN"},
      {"main::{lambda(int)#1}::operator()(int) const::{lambda(int)#1}::operator()(int) const "
       "[clone .constprop.0] [clone .isra.0]",
       "main::{lambda(int)#1}::operator()::{lambda(int)#1}::operator()"},
      {"Foo::Bar() const &&::Local::Get()", "Foo::Bar::Local::Get"},
      {"typeinfo for app::Process[abi:cxx11](std::vector<int, std::allocator<int> > "
       "const&)::{lambda(int)#1}",
       "app::Process::{lambda(int)#1}"},
  });
  // Not the function itself.
  EXPECT_NE(ShortName("app::Pick(int)::{lambda(int)#1}::_FUN(int)"), ShortName("app::Pick(int)"));
}

TEST(ShortNameTest, CxxLiteralOperator) {
  EXPECT_EQ(ShortName("operator\"\" _kb(unsigned long long)"), "operator\"\" _kb");
  EXPECT_EQ(ShortName("units::operator\"\" _MiB(unsigned long long)"), "units::operator\"\" _MiB");
}

TEST(ShortNameTest, RustLegacyAndV0) {
  ExpectShortNames({
      // Legacy symbols, demangled without their hash.
      {"leak::main", "leak::main"},
      {"leak::main::{{closure}}", "leak::main::{{closure}}"},
      {"leak::Cache<K>::get_or_create", "leak::Cache::get_or_create"},
      {"hashbrown::raw::RawTable<T,A>::reserve_rehash", "hashbrown::raw::RawTable::reserve_rehash"},
      {"<alloc::vec::Vec<T> as core::clone::Clone>::clone",
       "<alloc::vec::Vec as core::clone::Clone>::clone"},
      {"<u32 as leak::Render>::render", "<u32 as leak::Render>::render"},
      // v0 symbols: generic arguments after a turbofish, inherent impls as <Type>::method.
      {"leak::Cache::get_or_create::<u32>", "leak::Cache::get_or_create"},
      {"leak::build::<alloc::string::String>", "leak::build"},
      {"<leak::Cache<u32>>::get_or_create", "<leak::Cache>::get_or_create"},
      {"leak::main::{closure#0}", "leak::main::{closure#0}"},
      // A turbofish inside the path: its "::" goes with it.
      {"std::rt::lang_start::<()>::{closure#0}", "std::rt::lang_start::{closure#0}"},
      {"leak::process::<u32>::{closure#0}", "leak::process::{closure#0}"},
      {"<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::{"
       "shim:vtable#0}",
       "<std::rt::lang_start::{closure#0} as core::ops::function::FnOnce>::call_once::{shim:"
       "vtable#0}"},
      {"<hashbrown::raw::RawTable<(u32, alloc::vec::Vec<u8>)>>::reserve_rehash::<hashbrown::map::"
       "make_hasher<u32, alloc::vec::Vec<u8>, std::hash::random::RandomState>::{closure#0}>",
       "<hashbrown::raw::RawTable>::reserve_rehash"},
      {"<&alloc::string::String as core::fmt::Debug>::fmt",
       "<&alloc::string::String as core::fmt::Debug>::fmt"},
      // v0 with the crate disambiguators (as c++filt prints them): dropped like ABI tags.
      {"<alloc[fdfd2bd8633a6659]::raw_vec::RawVec<alloc[fdfd2bd8633a6659]::string::String>>::grow_"
       "one",
       "<alloc::raw_vec::RawVec>::grow_one"},
      {"leak[9458f455e83e3168]::main", "leak::main"},
  });
}

// Clones whose symbol was not demangled whole keep GCC's suffixes; they go like "[clone .cold]".
TEST(ShortNameTest, CloneSuffixes) {
  ExpectShortNames({
      {"Split.isra.0", "Split"},
      {"app::Parse.constprop.0.isra.0", "app::Parse"},
      {"app::Parse.part.0.cold", "app::Parse"},
      {"app::Parse.lto_priv.0", "app::Parse"},
      {"app::v1.2", "app::v1.2"},
      {"app::cold.x", "app::cold.x"},
  });
}

TEST(ShortNameTest, OtherNamesStayAsTheyAre) {
  ExpectShortNames({
      {"malloc", "malloc"},
      {"__libc_start_main_impl", "__libc_start_main_impl"},
      {"0x4011f0", "0x4011f0"},
      {"", ""},
  });
}

TEST(ShortNameTest, IsMangledName) {
  for (const char* mangled :
       {"_Z4Coldi",
        "_ZN6thumbs5CacheIiNSt7__cxx1112basic_stringIcSt11char_"
        "traitsIcESaIcEEEE11GetOrCreateERKi",
        "_Z4Coldi.cold", "_ZN4leak4main17h68d97aefc12db3cbE", "_RNvCscJEj9Xep4Zo_4leak4main",
        "_RNvMCscJEj9Xep4Zo_4leakINtB2_5CachemE13get_or_createB2_"}) {
    EXPECT_TRUE(IsMangledName(mangled)) << mangled;
  }
  for (const char* plain : {"main", "malloc", "_start", "__libc_start_main_impl", "Cache#fill",
                            "<main>", "ns::Build(int)", "main.main", "", "_"}) {
    EXPECT_FALSE(IsMangledName(plain)) << plain;
  }
}

}  // namespace
}  // namespace heaprec::analysis
