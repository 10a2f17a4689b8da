// Demangling of real symbol names: Rust's legacy and v0 manglings as rustc 1.63 (Debian 12) and
// 1.95 emit them (taken from `nm` of tests/workloads/wl_rust_sites.rs and of small programs built
// with them), and C++ as GCC 12 emits it.
#include "symbolize/demangle.h"

#include <gtest/gtest.h>

namespace heaprec::symbolize {
namespace {

TEST(DemangleTest, RustLegacyWithoutTheHash) {
  EXPECT_EQ(Demangle("_ZN13wl_rust_sites10load_value17h16fc56a1c516ea27E"),
            "wl_rust_sites::load_value");
  EXPECT_EQ(Demangle("_ZN13wl_rust_sites5Cache11get_or_load17h7960f56c924ea8fbE"),
            "wl_rust_sites::Cache::get_or_load");
  // Generic arguments and punctuation are escaped ($LT$, $u20$, ..) in legacy names.
  EXPECT_EQ(Demangle("_ZN4core3ptr68drop_in_place$LT$alloc..boxed..Box$LT$wl_rust_sites..Session$"
                     "GT$$GT$17he7d193e7da7d8784E"),
            "core::ptr::drop_in_place<alloc::boxed::Box<wl_rust_sites::Session>>");
}

TEST(DemangleTest, RustLegacyTraitImplsAndClosures) {
  EXPECT_EQ(Demangle("_ZN104_$LT$core..iter..sources..from_fn..FromFn$LT$F$GT$$u20$as$u20$core.."
                     "iter..traits..iterator..Iterator$GT$4next17h5029af7e7bac568fE"),
            "<core::iter::sources::from_fn::FromFn<F> as core::iter::traits::iterator::Iterator>"
            "::next");
  EXPECT_EQ(Demangle("_ZN1t4main28_$u7b$$u7b$closure$u7d$$u7d$17hd4ca6132dacbc4bdE"),
            "t::main::{{closure}}");
}

TEST(DemangleTest, RustLegacyLocalCopyFromLlvm) {
  EXPECT_EQ(Demangle("_ZN12panic_unwind5dwarf2eh20read_encoded_pointer17h2a54419ccfa1d320E.llvm."
                     "16159844760554946847"),
            "panic_unwind::dwarf::eh::read_encoded_pointer");
}

TEST(DemangleTest, RustV0WithoutCrateDisambiguators) {
  EXPECT_EQ(Demangle("_RNvCscybDecPehXV_13wl_rust_sites10load_value"), "wl_rust_sites::load_value");
  // The shape of the issue: Rust 1.95's standard library is built with v0 names.
  EXPECT_EQ(Demangle("_RNvNtCslNYArtu3iFV_5alloc5alloc12alloc_zeroed"),
            "alloc::alloc::alloc_zeroed");
  EXPECT_EQ(
      Demangle("_RNvXNtNtNtCsjrHSEGnQ3l9_3std3sys5alloc4unixNtNtB8_5alloc6SystemNtNtNtCsgEmfK2"
               "I1SDS_4core5alloc6global11GlobalAlloc12alloc_zeroed"),
      "<std::alloc::System as core::alloc::global::GlobalAlloc>::alloc_zeroed");
}

TEST(DemangleTest, RustV0GenericsTraitImplsAndClosures) {
  EXPECT_EQ(Demangle("_RINvCs6Bq21TOhnQv_1t4makehEB2_"), "t::make::<u8>");
  EXPECT_EQ(Demangle("_RNvXsc_NtCsihNoVIYWwLU_5alloc3vecINtB5_3VechENtNtCs6IL9ONYDOZW_4core5clone5C"
                     "lone5cloneCs6Bq21TOhnQv_1t"),
            "<alloc::vec::Vec<u8> as core::clone::Clone>::clone");
  EXPECT_EQ(Demangle("_RINvNtCs6IL9ONYDOZW_4core3ptr13drop_in_placeINtNtCsihNoVIYWwLU_5alloc5boxed3"
                     "BoxNtCscybDecPehXV_13wl_rust_sites7SessionEEB1h_"),
            "core::ptr::drop_in_place::<alloc::boxed::Box<wl_rust_sites::Session>>");
  EXPECT_EQ(Demangle("_RNCINvNtCsdyIG5SqMl5y_3std2rt10lang_startuE0CscybDecPehXV_13wl_rust_sites."
                     "llvm.12288753963033155917"),
            "std::rt::lang_start::<()>::{closure#0}");
}

TEST(DemangleTest, CxxAsTheToolchainPrintsIt) {
  EXPECT_EQ(Demangle("_ZN2ns3FooEv"), "ns::Foo()");
  EXPECT_EQ(Demangle("_ZNSt15__new_allocatorIhE8allocateEmPKv"),
            "std::__new_allocator<unsigned char>::allocate(unsigned long, void const*)");
}

TEST(DemangleTest, OtherNamesUnchanged) {
  EXPECT_EQ(Demangle("malloc"), "malloc");
  EXPECT_EQ(Demangle("site_malloc_live"), "site_malloc_live");
  EXPECT_EQ(Demangle(""), "");
  // Cut off: neither demangler accepts them.
  EXPECT_EQ(Demangle("_RNvCscybDecPehXV_13wl_rust_sit"), "_RNvCscybDecPehXV_13wl_rust_sit");
  EXPECT_EQ(Demangle("_ZN13wl_rust_sites10load_value17h16fc"),
            "_ZN13wl_rust_sites10load_value17h16fc");
  EXPECT_EQ(Demangle("_ZN2ns3Foo"), "_ZN2ns3Foo");
}

}  // namespace
}  // namespace heaprec::symbolize
