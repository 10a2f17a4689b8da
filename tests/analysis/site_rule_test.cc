// The allocation-site rule (analysis/site_rule.h): which frames heaprec's default patterns
// (schema/runtime_frames.h) skip and which user functions they leave, even ones named like the
// runtime's; the rule on runtime libraries and Ruby's C methods; user patterns (--keep-frames wins
// over every skip, --all-frames leaves only the user's); invalid patterns; and that the patterns
// mean the same to Go's regexp, which pprof compiles them with (as drop_frames).
#include "analysis/site_rule.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "schema/runtime_frames.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

// Function names as the view gives them to the rule: short names for C++ and Rust.
const std::vector<std::string> kRuntimeNames = {
    // The allocator and the C library's allocating helpers.
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc", "strdup", "strndup", "asprintf", "getline",
    // glibc internals and start-up.
    "__libc_malloc", "__GI___libc_malloc", "_int_malloc", "_IO_file_doallocate", "_dl_init",
    "__strdup", "__libc_start_main_impl", "__libc_start_call_main", "_start", "start_thread",
    "clone3", "__clone",
    // C++: operator new and delete, the standard library, the ABI runtime.
    "operator new", "operator new[]", "operator delete", "operator delete[]",
    "std::vector::_M_realloc_insert", "std::__new_allocator::allocate", "std::make_unique",
    "std::__cxx11::basic_string::_M_mutate", "std::_Function_handler::_M_invoke",
    "std::thread::_State_impl::_M_run", "__gnu_cxx::new_allocator::allocate",
    "__cxxabiv1::__terminate", "__cxa_allocate_exception",
    // Rust: std's crates, hashbrown, the allocator shims, std's impls on its own types.
    "alloc::alloc::exchange_malloc", "alloc::raw_vec::finish_grow",
    "<alloc::raw_vec::RawVec>::grow_one", "alloc::fmt::format::format_inner",
    "<alloc::vec::Vec as core::clone::Clone>::clone", "hashbrown::raw::RawTable::reserve_rehash",
    "<hashbrown::raw::RawTable>::reserve_rehash", "std::rt::lang_start_internal",
    "core::ops::function::FnOnce::call_once", "__rust_alloc", "__rdl_alloc", "__rg_alloc",
    "<str as alloc::string::ToString>::to_string",
    "<[T] as alloc::slice::hack::ConvertVec>::to_vec",
    // heaprec's own entry points.
    "heaprec_malloc"};

// User functions, some named like the runtime's.
const std::vector<std::string> kUserNames = {"main",
                                             "leak::main",
                                             "Store::Put",
                                             "allocate",
                                             "std_thing",
                                             "mystd::x",
                                             "stdx::Vector::push",
                                             "my_malloc",
                                             "malloc_wrapper",
                                             "xmalloc",
                                             "operator_new_pool",
                                             "app::Store::operator new",
                                             "thumbs::Cache::GetOrCreate",
                                             "(anonymous namespace)::Describe",
                                             "main::{lambda(int)#1}::operator()",
                                             "startup",
                                             "clone_tree",
                                             "libc_helper",
                                             "corelib::parse",
                                             "alloc_buffer",
                                             "allocator::Pool::get",
                                             "<leak::Cache>::get_or_create",
                                             "<u32 as leak::Render>::render",
                                             "leak::main::{{closure}}",
                                             "Cache#fill",
                                             "block in <main>",
                                             "0x4011f0"};

TEST(SiteRuleTest, DefaultsSkipTheRuntimeAndKeepUserFunctions) {
  const SiteRule rule;
  EXPECT_TRUE(rule.defaults());
  for (const std::string& name : kRuntimeNames) {
    EXPECT_TRUE(rule.Skips(name, "app", false)) << name;
  }
  for (const std::string& name : kUserNames) {
    EXPECT_FALSE(rule.Skips(name, "app", false)) << name;
    EXPECT_FALSE(rule.Skips(name, "", false)) << name;
  }
}

TEST(SiteRuleTest, RuntimeLibrariesAreSkippedWhateverTheFunction) {
  const SiteRule rule;
  for (const char* library :
       {"libc.so.6", "libstdc++.so.6", "ld-linux-x86-64.so.2", "libheaprec.so", "libm.so.6",
        "libgcc_s.so.1", "libjemalloc.so.2", "libtcmalloc_minimal.so.4"}) {
    EXPECT_TRUE(rule.Skips("Store::Put", library, false)) << library;
    EXPECT_TRUE(rule.Skips("", library, false)) << library << ": an unsymbolized address";
  }
  for (const char* library : {"libfoo.so", "libcrypto.so.3", "libcurl.so.4", "app", ""}) {
    EXPECT_FALSE(rule.Skips("Store::Put", library, false)) << library;
    EXPECT_FALSE(rule.Skips("", library, false)) << library;
  }
}

TEST(SiteRuleTest, RubyMethodsWrittenInC) {
  const SiteRule rule;
  EXPECT_TRUE(rule.Skips("Array#push", "", true));
  EXPECT_TRUE(rule.Skips("Integer#times", "", true));
  EXPECT_FALSE(rule.Skips("Cache#fill", "", false));
  EXPECT_FALSE(SiteRule::WithoutDefaults().Skips("Array#push", "", true));
}

TEST(SiteRuleTest, UserPatterns) {
  SiteRule rule;
  rule.AddSkip("^Store::");
  rule.AddSkip("_wrapper$");
  EXPECT_TRUE(rule.Skips("Store::Put", "app", false));
  EXPECT_TRUE(rule.Skips("malloc_wrapper", "app", false));
  EXPECT_FALSE(rule.Skips("MyStore::Put", "app", false));
  EXPECT_TRUE(rule.Skips("malloc", "app", false)) << "the defaults stay";

  // A keep pattern wins over the defaults, the user's skips, the library rule and the Ruby rule.
  rule.AddKeep("^std::vector::");
  rule.AddKeep("^Store::Put$");
  rule.AddKeep("#push$");
  EXPECT_FALSE(rule.Skips("std::vector::_M_realloc_insert", "app", false));
  EXPECT_FALSE(rule.Skips("Store::Put", "app", false));
  EXPECT_FALSE(rule.Skips("Store::Put", "libstdc++.so.6", false));
  EXPECT_FALSE(rule.Skips("Array#push", "", true));
  EXPECT_TRUE(rule.Skips("Store::Get", "app", false));
  EXPECT_TRUE(rule.Skips("std::map::operator[]", "app", false));
}

TEST(SiteRuleTest, WithoutDefaultsSkipsOnlyTheUsersPatterns) {
  SiteRule rule = SiteRule::WithoutDefaults();
  EXPECT_FALSE(rule.defaults());
  for (const std::string& name : kRuntimeNames) {
    EXPECT_FALSE(rule.Skips(name, "libc.so.6", false)) << name;
  }
  rule.AddSkip("^malloc$");
  EXPECT_TRUE(rule.Skips("malloc", "", false));
  EXPECT_FALSE(rule.Skips("operator new", "libstdc++.so.6", false));
  rule.AddKeep("^malloc$");
  EXPECT_FALSE(rule.Skips("malloc", "", false));
}

TEST(SiteRuleTest, InvalidPatternsThrowNamingThem) {
  for (const char* pattern : {"(", "[a-", "*x", "a{2,1}"}) {
    SiteRule rule;
    try {
      rule.AddSkip(pattern);
      ADD_FAILURE() << pattern << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), "'" + std::string(pattern) + "' is not a valid regular expression");
    }
    EXPECT_THROW(rule.AddKeep(pattern), std::invalid_argument) << pattern;
    // The rule is left as it was.
    EXPECT_TRUE(rule.Skips("malloc", "", false));
    EXPECT_FALSE(rule.Skips("Store::Put", "", false));
  }
}

// What Go's regexp says of `pattern` on each name: "1"/"0" per name, or its compile error.
std::string GoMatches(const std::string& pattern, const std::vector<std::string>& names) {
  std::string command =
      test_support::ShellQuote(HEAPREC_GO_REGEXP) + " " + test_support::ShellQuote(pattern);
  for (const std::string& name : names) command += " " + test_support::ShellQuote(name);
  std::string output;
  EXPECT_EQ(test_support::RunCommand(command, &output), 0) << output;
  return output;
}

std::string StdMatches(const std::string& pattern, const std::vector<std::string>& names) {
  const std::regex re(pattern, std::regex::ECMAScript);
  std::string out;
  for (const std::string& name : names) out += std::regex_search(name, re) ? "1\n" : "0\n";
  return out;
}

// pprof compiles a profile's drop_frames with Go's regexp: heaprec's patterns must be valid there
// and find the same names as std::regex (ECMAScript) does.
TEST(SiteRuleTest, GoRegexpReadsThePatternsAlike) {
  std::vector<std::string> names = kRuntimeNames;
  names.insert(names.end(), kUserNames.begin(), kUserNames.end());
  // As pprof compiles drop_frames (profile.RemoveUninteresting): whole names only.
  const std::string whole = "^(" + std::string(schema::kRuntimeFrames) + ")$";
  const std::string frames = StdMatches(whole, names);
  EXPECT_EQ(GoMatches(whole, names), frames);
  // The names above, as a check on this test: every runtime name matches, no user name does.
  std::string expected;
  for (size_t i = 0; i < names.size(); ++i) expected += i < kRuntimeNames.size() ? "1\n" : "0\n";
  EXPECT_EQ(frames, expected);
  const std::vector<std::string> libraries = {
      "libc.so.6",      "libstdc++.so.6", "ld-linux-x86-64.so.2", "libheaprec.so",    "libfoo.so",
      "libcrypto.so.3", "libc_helper.so", "libstdc++fs.a",        "libmimalloc.so.2", "app"};
  EXPECT_EQ(GoMatches(schema::kRuntimeLibraries, libraries),
            StdMatches(schema::kRuntimeLibraries, libraries));
}

}  // namespace
}  // namespace heaprec::analysis
