// The allocation-site rule (analysis/site_rule.h): which frames heaprec's default patterns
// (schema/runtime_frames.h) skip and which user functions they leave, even ones named like the
// runtime's; the rule on runtime libraries and Ruby's C methods; user patterns (--keep-frames wins
// over every skip, --all-frames leaves only the user's); invalid patterns; and that the patterns
// mean the same to Go's regexp, which pprof compiles them with (as drop_frames); and, on real
// demangled C++ names, that heaprec's rule on a name's short form and pprof's own pruning on the
// full name (drop_frames and keep_frames as heaprec's profiles carry them) say the same.
#include "analysis/site_rule.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <exception>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/short_name.h"
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
    "std::thread::_State_impl::_M_run", "__gnu_cxx::new_allocator::allocate", "std::operator+",
    "std::__cxx11::basic_string::operator std::basic_string_view", "std::basic_ios::operator void*",
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
                                             "shop::Sku::operator std::__cxx11::basic_string",
                                             "shop::Render",
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

// Whether pprof drops each full name's frame (go_regexp -pprof-drops), with a profile's
// drop_frames and keep_frames (by default heaprec's native profiles').
std::vector<bool> PprofDrops(const std::vector<std::string>& names,
                             const std::string& drop = schema::kRuntimeFrames,
                             const std::string& keep = schema::kStartFrames) {
  std::string input = test_support::MakeTempDir() + "/names";
  {
    std::ofstream out(input);
    for (const std::string& name : names) out << name << "\n";
  }
  std::string command = test_support::ShellQuote(HEAPREC_GO_REGEXP) + " -pprof-drops " +
                        test_support::ShellQuote(drop) + " " + test_support::ShellQuote(keep) +
                        " < " + test_support::ShellQuote(input);
  std::string output;
  EXPECT_EQ(test_support::RunCommand(command, &output), 0) << output;
  std::vector<bool> drops;
  for (char c : output) {
    if (c == '0' || c == '1') drops.push_back(c == '1');
  }
  EXPECT_EQ(drops.size(), names.size()) << output;
  drops.resize(names.size());
  return drops;
}

// A Ruby profile with native bytes (ruby/ext/heaprec/heap_dump.cc): pprof drops every native
// frame by its name, symbolized or named after its file, and never a Ruby frame or marker, so it
// charges each sample to the Ruby frame above its native ones, as heaprec's reports do. Go's
// regexp and std::regex read the pattern alike.
TEST(SiteRuleTest, PprofDropsEveryNativeFrameOfARubyProfileAndNoRubyFrame) {
  const std::vector<std::string> native = {"rb_str_times",
                                           "objspace_xmalloc0",
                                           "gc_mark_children.constprop.0",
                                           "str_new0.isra.0",
                                           "rb_ary_push.cold",
                                           "Init_parser",
                                           "json::Parser::~Parser()",
                                           "ns::Buffer::grow(unsigned long)",
                                           "[libruby-3.1.so.3.1]",
                                           "[vdso]",
                                           "[unmapped]",
                                           "malloc",
                                           "main",
                                           "_start",
                                           "__libc_start_call_main",
                                           "operator new(unsigned long)"};
  const std::vector<std::string> ruby = {"Foo#bar",
                                         "Foo.bar",
                                         "Foo.cold",
                                         "Foo.part",
                                         "Heaprec.dump",
                                         "<main>",
                                         "<top (required)>",
                                         "<class:Foo>",
                                         "block in Foo#bar",
                                         "block (2 levels) in <main>",
                                         "Integer#times",
                                         "JSON::Ext::Parser#parse",
                                         "String#*",
                                         "Array#<<",
                                         "Hash#[]=",
                                         "Foo#ready?",
                                         "#<Class:0x...>#make",
                                         "(garbage collector)",
                                         "(no Ruby stack: a thread without the GVL)",
                                         "(truncated: deeper frames omitted)"};
  std::vector<std::string> names = native;
  names.insert(names.end(), ruby.begin(), ruby.end());
  const std::string drop = std::string(schema::kRuntimeFrames) + "|" + schema::kNativeFrameNames;
  std::vector<bool> expected(native.size(), true);
  expected.resize(names.size(), false);
  EXPECT_EQ(PprofDrops(names, drop, ""), expected);
  const std::string whole = "^(" + drop + ")$";
  EXPECT_EQ(GoMatches(whole, names), StdMatches(whole, names));
}

struct CxxName {
  const char* demangled;  // as the profile names the function
  const char* short_name;
  bool runtime;
};

// Real names, as c++filt and the symbolizer print them: libstdc++.so.6's, and those of GCC 12
// -O2 -g programs (tests/e2e/programs: user_sites, inlined_sites; demo/kvstore; heaprec itself;
// lambdas, operators, thunks and clones from small programs), in every shape.
const std::vector<CxxName> kCxxNames = {
    // Return types, with templates and spaces.
    {"std::__detail::_MakeUniq<char []>::__array std::make_unique<char []>(unsigned long)",
     "std::make_unique", true},
    {"void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__"
     "normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
     "std::vector::_M_realloc_insert", true},
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >& "
     "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">, std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > > >::emplace_back<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > >(std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >&&)",
     "std::vector::emplace_back", true},
    {"std::_Rb_tree_node<std::pair<int const, std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > > >* std::_Rb_tree<int, std::pair<int const, "
     "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, "
     "std::_Select1st<std::pair<int const, std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > > >, std::less<int>, "
     "std::allocator<std::pair<int const, std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > > > "
     ">::_M_create_node<std::piecewise_construct_t const&, std::tuple<int const&>, std::tuple<> "
     ">(std::piecewise_construct_t const&, std::tuple<int const&>&&, std::tuple<>&&)",
     "std::_Rb_tree::_M_create_node", true},
    {"bool std::has_facet<std::__cxx11::moneypunct<char, false> >(std::locale const&)",
     "std::has_facet", true},
    {"char* std::string::_S_construct<char const*>(char const*, char const*, std::allocator<char> "
     "const&, std::forward_iterator_tag)",
     "std::string::_S_construct", true},
    {"long std::__copy_streambufs<char, std::char_traits<char> >(std::basic_streambuf<char, "
     "std::char_traits<char> >*, std::basic_streambuf<char, std::char_traits<char> >*)",
     "std::__copy_streambufs", true},
    {"void std::_Function_base::_Base_manager<shop::Catalog::Hooks(int)::{lambda(int)#1}>::_M_"
     "create<shop::Catalog::Hooks(int)::{lambda(int)#1}>(std::_Any_data&, "
     "shop::Catalog::Hooks(int)::{lambda(int)#1}&&, std::integral_constant<bool, false>)",
     "std::_Function_base::_Base_manager::_M_create", true},
    {"std::function<long (long)>& std::vector<std::function<long (long)>, "
     "std::allocator<std::function<long (long)> > "
     ">::emplace_back<shop::Catalog::Hooks(int)::{lambda(long)#1}>(shop::Catalog::Hooks(int)::{"
     "lambda(long)#1}&&)",
     "std::vector::emplace_back", true},
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
     "shop::Render<int>(int const&)",
     "shop::Render", false},
    // Templated free operators, and operators of every kind.
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
     "std::operator+<char, std::char_traits<char>, std::allocator<char> "
     ">(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&, char "
     "const*)",
     "std::operator+", true},
    {"std::basic_istream<char, std::char_traits<char> >& std::operator>><char, "
     "std::char_traits<char> >(std::basic_istream<char, std::char_traits<char> >&, char*)",
     "std::operator>>", true},
    {"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> "
     ">(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
     "std::operator<<", true},
    {"std::__detail::_Map_base<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const, int>, std::allocator<std::pair<std::__cxx11::basic_string<char,"
     " std::char_traits<char>, std::allocator<char> > const, int> >, std::__detail::_Select1st, "
     "std::equal_to<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     "> >, std::hash<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > >, std::__detail::_Mod_range_hashing, "
     "std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, "
     "std::__detail::_Hashtable_traits<true, false, true>, true>::operator[](std::__cxx11::basic_"
     "string<char, std::char_traits<char>, std::allocator<char> >&&)",
     "std::__detail::_Map_base::operator[]", true},
    {"operator new[](unsigned long)", "operator new[]", true},
    {"operator delete(void*, unsigned long)", "operator delete", true},
    {"std::basic_ios<char, std::char_traits<char> >::operator bool() const",
     "std::basic_ios::operator bool", true},
    {"std::basic_ios<char, std::char_traits<char> >::operator void*() const",
     "std::basic_ios::operator void*", true},
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">::operator std::basic_string_view<char, std::char_traits<char> >() const",
     "std::__cxx11::basic_string::operator std::basic_string_view", true},
    {"std::filesystem::__cxx11::path::operator/=(std::filesystem::__cxx11::path const&)",
     "std::filesystem::__cxx11::path::operator/=", true},
    {"std::__exception_ptr::operator==(std::__exception_ptr::exception_ptr const&, "
     "std::__exception_ptr::exception_ptr const&)",
     "std::__exception_ptr::operator==", true},
    // The user's conversion operator to a std type, and the user's operators.
    {"shop::Sku::operator std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >() const [clone .isra.0]",
     "shop::Sku::operator std::__cxx11::basic_string", false},
    {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > >::operator()(int) const",
     "thumbs::Cache::operator()", false},
    {"app::Store::operator->() [clone .isra.0]", "app::Store::operator->", false},
    {"app::operator<<(std::basic_ostream<char, std::char_traits<char> >&, app::Point const&)",
     "app::operator<<", false},
    {"app::Store::operator new(unsigned long)", "app::Store::operator new", false},
    // Lambdas, in functions and namespaces, and the library's handlers of them.
    {"main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()", false},
    {"app::{lambda()#2}::operator()() const", "app::{lambda()#2}::operator()", false},
    {"shop::Catalog::Hooks(int)::{lambda(long)#1}::operator()(long) const",
     "shop::Catalog::Hooks::{lambda(long)#1}::operator()", false},
    {"std::_Function_handler<long (long), shop::Catalog::Hooks(int)::{lambda(long)#1}>::_M_"
     "invoke(std::_Any_data const&, long&&)",
     "std::_Function_handler::_M_invoke", true},
    {"std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > >::_M_run()",
     "std::thread::_State_impl::_M_run", true},
    // ABI tags, anonymous namespaces, clones.
    {"std::locale::name[abi:cxx11]() const", "std::locale::name", true},
    {"app::Format[abi:cxx11](app::Point const&)", "app::Format", false},
    {"(anonymous namespace)::Store::Put(std::basic_string_view<char, std::char_traits<char> >, "
     "unsigned long)",
     "(anonymous namespace)::Store::Put", false},
    {"(anonymous namespace)::Pool<double, (anonymous namespace)::HeapStorage>::Grow(unsigned "
     "long) [clone .constprop.0] [clone .cold]",
     "(anonymous namespace)::Pool::Grow", false},
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::find(char, "
     "unsigned long) const [clone .isra.0]",
     "std::__cxx11::basic_string::find", true},
    {"Split.isra.0", "Split", false},
    {"thumbs::Cache<int, std::string>::Fill.constprop.0.cold", "thumbs::Cache::Fill", false},
    // Thunks and special names.
    {"virtual thunk to std::__cxx11::basic_ostringstream<char, std::char_traits<char>, "
     "std::allocator<char> >::~basic_ostringstream()",
     "std::__cxx11::basic_ostringstream::~basic_ostringstream", true},
    {"non-virtual thunk to std::basic_iostream<char, std::char_traits<char> >::~basic_iostream()",
     "std::basic_iostream::~basic_iostream", true},
    {"non-virtual thunk to app::Derived::Get()", "app::Derived::Get", false},
    {"transaction clone for std::logic_error::what() const", "std::logic_error::what", true},
    {"guard variable for app::Registry()::instance", "app::Registry::instance", false},
    {"app::Registry()::instance", "app::Registry::instance", false},
    // The user's functions, in namespaces the library's names start like (these, and the app::
    // names above, are written for this test in the demangler's form).
    {"stdx::Vector<int>::push(int)", "stdx::Vector::push", false},
    {"mystd::Build(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     "> const&)",
     "mystd::Build", false},
    {"thumbs::Cache<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > >::GetOrCreate(int const&)",
     "thumbs::Cache::GetOrCreate", false},
    {"std::unique_ptr<char [], std::default_delete<char []> > thumbs::MakeBuffer<char>(unsigned "
     "long)",
     "thumbs::MakeBuffer", false},
    {"std::pair<int, std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > > app::Split<int>(int)",
     "app::Split", false},
};

// Each name's short form, heaprec's rule on it, and pprof's own pruning of the full name agree
// with the table.
TEST(SiteRuleTest, RealCxxNamesInShortAndAsPprofReadsThem) {
  const SiteRule rule;
  std::vector<std::string> full;
  for (const CxxName& name : kCxxNames) {
    EXPECT_EQ(ShortName(name.demangled), name.short_name) << name.demangled;
    EXPECT_EQ(rule.Skips(ShortName(name.demangled), "app", false), name.runtime) << name.demangled;
    full.push_back(name.demangled);
  }
  std::vector<bool> drops = PprofDrops(full);
  for (size_t i = 0; i < kCxxNames.size(); ++i) {
    EXPECT_EQ(drops[i], kCxxNames[i].runtime) << "pprof: " << kCxxNames[i].demangled;
  }
}

// The functions the C++ library exports (libstdc++.so.6's dynamic symbols, demangled by nm),
// every one of them: heaprec skips the ones pprof drops, and every one in the library's
// namespaces is skipped.
TEST(SiteRuleTest, EveryLibstdcxxFunctionIsReadAlikeByHeaprecAndPprof) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::terminate), &info), 0);
  std::string output;
  ASSERT_EQ(test_support::RunCommand("nm -D -C --defined-only " +
                                         test_support::ShellQuote(info.dli_fname) +
                                         " | sed -n 's/^[0-9a-f]* [TWi] //p' | sed 's/@.*//'",
                                     &output),
            0)
      << output;
  std::vector<std::string> names;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) names.push_back(line);
  }
  ASSERT_GT(names.size(), 3000u) << info.dli_fname;
  const SiteRule rule;
  std::vector<bool> drops = PprofDrops(names);
  size_t runtime = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string short_name = ShortName(names[i]);
    bool skips = rule.Skips(short_name, "app", false);
    EXPECT_EQ(skips, drops[i]) << names[i] << "\n short: " << short_name;
    if (short_name.starts_with("std::") || short_name.starts_with("__gnu_cxx::")) {
      EXPECT_TRUE(skips) << names[i];
    }
    runtime += skips;
  }
  EXPECT_GT(runtime, names.size() * 9 / 10);
}

}  // namespace
}  // namespace heaprec::analysis
