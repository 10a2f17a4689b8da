// Which frames are not the user's own code: the allocator, the C and C++ runtimes, the C++ and
// Rust standard libraries and heaprec itself. A sample's allocation site is its first frame, from
// the leaf, that none of these patterns names (analysis/site_rule.h). heaprec's profiles carry
// kRuntimeFrames as pprof's `drop_frames` and kStartFrames as its `keep_frames`, so that `pprof`
// shows the same sites.
//
// kRuntimeFrames is one regular expression in the subset that Go's RE2 (pprof) and ECMAScript
// (std::regex) read alike, and it must match a whole name. It reads two forms of each name alike:
//   - heaprec's short name (analysis/short_name.h), "std::vector::_M_realloc_insert", which the
//     site rule matches;
//   - the name pprof matches (profile/prune.go, simplifyFunc): the full demangled name cut at its
//     first '(' other than those of "(anonymous namespace)" and "operator()", so with its return
//     type and template arguments, and cut short inside them when they hold a '(':
//     "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>",
//     "std::_Function_handler<int " (of "std::_Function_handler<int (int), ...>::_M_invoke").
// Header-only and allocation-free, like the rest of schema/.
#pragma once

namespace heaprec::schema {

// Function names. Each line is one family; README.md ("Allocation sites") lists them for users.
inline constexpr char kRuntimeFrames[] =
    // C allocation entry points and the C library's allocating helpers.
    "(malloc|calloc|realloc|reallocarray|free|memalign|posix_memalign|aligned_alloc|valloc|pvalloc"
    "|strdup|strndup|wcsdup|asprintf|vasprintf|getline|getdelim)"
    // glibc internals and start-up (__libc_start_main_impl, __libc_start_call_main, _dl_init...).
    "|(__libc_|__GI_|_IO_|_dl_|_int_|__strdup|__vasprintf).*"
    "|_start|start_thread|clone|clone3|__clone|__clone3"
    // C++: operator new and delete, the ABI runtime's entry points.
    "|operator (new|delete).*|__cxa_.*"
    // C++: the standard library and the ABI runtime's namespaces, after the return type that a
    // function template's name starts with ("std::__detail::_MakeUniq<char []>::__array
    // std::make_unique<char []>", "std::__cxx11::basic_string<char, ...> std::operator+<char,
    // ...>"), or a thunk's words ("non-virtual thunk to std::..."). The return type ends with
    // neither a comma (", std::allocator<char>" is a template argument) nor "::operator" (the
    // user's "app::Id::operator std::string" converts to a std type). After the namespace a
    // space is one of the name's own only where a return type cannot end: after a comma or
    // "operator", before a bracket, '&' or '*', before a builtin type's or qualifier's word
    // ("<unsigned long>", "<int const&>", "(anonymous namespace)", "{unnamed type#1}"), or at the
    // end of a name pprof cut short ("std::_Function_handler<int "). So the user's function
    // template "std::__cxx11::basic_string<char, ...> app::Render<int>" is not the library's.
    "|(.*([^ ,r]|[^o]r|[^t]or|[^a]tor|[^r]ator|[^e]rator|[^p]erator|[^o]perator|[^:]operator) )?"
    "(std|__gnu_cxx|__cxxabiv1)::([^ ]|(,|operator) | ([<>&*(\\[]|(const|volatile|signed|unsigned"
    "|long|short|int|char|wchar_t|double|float|bool|void|__int128|namespace|type)\\b)| $)*"
    // Rust: the standard library's crates (std's paths are matched above; hashbrown is std's
    // HashMap), its allocator shims, and trait impls on std's own types
    // ("<alloc::string::String as core::clone::Clone>::clone"), std's trait impls on primitive
    // types and references ("<str as alloc::string::ToString>::to_string",
    // "<u8 as alloc::vec::spec_from_elem::SpecFromElem>::from_elem") and on a bare generic
    // ("<T as alloc::slice::hack::ConvertVec>::to_vec"), and their inherent methods
    // ("<[u8]>::to_vec_in", as v0 names them). Impls on the user's types are the user's.
    "|(core|alloc|hashbrown)::.*|<(std|core|alloc|hashbrown)::.*|__(rust|rdl|rg)_.*"
    "|<(str|\\[.+\\]|&.+|[A-Z]|bool|char|[iuf](8|16|32|64|128|size))( as (std|core|alloc)::|>::).*"
    // heaprec's own entry points.
    "|heaprec_.*";

// The frames from the root to main or a thread's function, which kRuntimeFrames names too: they
// are not sites, but pprof must see them as the user's (the profile's `keep_frames`). pprof
// prunes a sample at its first dropped frame from the root after a frame of the user's; when
// the start-up frames were dropped too, a sample whose first frame of the user's shares its
// location with inlined library code (main with std::string's constructor inlined into it) had
// no such frame, and pprof pruned nothing of it, charging it to the library.
inline constexpr char kStartFrames[] =
    "_start|__libc_start_.*|_dl_start_user|_dl_init|start_thread|clone|clone3|__clone|__clone3";

// In a profile whose sites are an interpreter's frames (the Ruby front end's, with native bytes:
// docs/design/ruby.md), every native frame belongs to the runtime: its site is the interpreter's
// frame above it. pprof finds native frames by these names, which no interpreter frame has:
// Ruby's labels always hold '#', '.', '<' or a space ("Foo#bar", "Foo.bar", "<main>",
// "block in Foo#bar"), and its markers start with '(', where pprof cuts them to nothing.
//   - C identifiers and C++ qualified names as pprof cuts them ("rb_str_times",
//     "json::Parser::~Parser"), with GCC's clone suffixes ("gc_mark.constprop.0"; ".cold" only
//     after a lowercase start, as "Foo.cold" is a Ruby singleton method's label);
//   - "[libruby.so.3.1]": the front end's name for a frame no symbol names (its mapped file's
//     base name, as pprof shows such a frame), so that pprof can drop it too.
// C++ names with template arguments or lambdas are not matched; pprof charges such a frame.
inline constexpr char kNativeFrameNames[] =
    "[A-Za-z_][A-Za-z0-9_:~]*(\\.(constprop|isra|part|lto_priv)\\.[0-9]+)*"
    "|[a-z_][A-Za-z0-9_:~]*(\\.(constprop|isra|part|lto_priv)\\.[0-9]+)*\\.cold(\\.[0-9]+)?"
    "|\\[[^\\]]+\\]";

// Base names of the mapped files whose code is all runtime, whatever its functions are called:
// the C and C++ runtime libraries, other allocators, and heaprec's preload library.
inline constexpr char kRuntimeLibraries[] =
    "^(libc|libm|libstdc\\+\\+|libgcc_s|libpthread|libdl|librt|ld-linux-x86-64|libjemalloc"
    "|libtcmalloc[a-z_]*|libmimalloc|libheaprec[a-z_]*)\\.so";

}  // namespace heaprec::schema
