// Which frames are not the user's own code: the allocator, the C and C++ runtimes, the C++ and
// Rust standard libraries and heaprec itself. A sample's allocation site is its first frame, from
// the leaf, that none of these patterns names (analysis/site_rule.h). heaprec's profiles carry
// kRuntimeFrames as pprof's `drop_frames`, so that `pprof` shows the same sites.
//
// kRuntimeFrames is one regular expression in the subset that Go's RE2 (pprof) and ECMAScript
// (std::regex) read alike, and it must match a whole name, as pprof matches drop_frames: pprof
// tests "^(" drop_frames ")$" against each function's name with its parameter list removed.
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
    // C++: operator new and delete, the standard library, the ABI runtime. (A name may start with
    // its return type: "std::__detail::_MakeUniq<char []>::__array std::make_unique<char []>".)
    "|operator (new|delete).*"
    "|(std|__gnu_cxx|__cxxabiv1)::.*|__cxa_.*"
    // Rust: the standard library's crates (hashbrown is std's HashMap), its allocator shims, and
    // trait impls on std's own types ("<alloc::string::String as core::clone::Clone>::clone"),
    // std's trait impls on primitive types and references ("<str as
    // alloc::string::ToString>::to_string",
    // "<u8 as alloc::vec::spec_from_elem::SpecFromElem>::from_elem") and on a bare generic
    // ("<T as alloc::slice::hack::ConvertVec>::to_vec"), and their inherent methods
    // ("<[u8]>::to_vec_in", as v0 names them). Impls on the user's types are the user's.
    "|<?(std|core|alloc|hashbrown)::.*|__(rust|rdl|rg)_.*"
    "|<(str|\\[.+\\]|&.+|[A-Z]|bool|char|[iuf](8|16|32|64|128|size))( as (std|core|alloc)::|>::).*"
    // heaprec's own entry points.
    "|heaprec_.*";

// Base names of the mapped files whose code is all runtime, whatever its functions are called:
// the C and C++ runtime libraries, other allocators, and heaprec's preload library.
inline constexpr char kRuntimeLibraries[] =
    "^(libc|libm|libstdc\\+\\+|libgcc_s|libpthread|libdl|librt|ld-linux-x86-64|libjemalloc"
    "|libtcmalloc[a-z_]*|libmimalloc|libheaprec[a-z_]*)\\.so";

}  // namespace heaprec::schema
