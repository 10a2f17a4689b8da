// A native profile whose stacks go through the allocator, the C++ standard library and the C
// runtime's start-up, as a real C++ program's do, with the system (mangled) names the symbolizer
// leaves: for the tests of the allocation-site rule (analysis/site_rule.h), short names and call
// lines in the top table, its outputs and the `report` command.
//
// Stacks, leaf first (locations are leaf first, lines innermost first, as in heaprec's profiles):
//   A  malloc < operator new < std::vector<int>::_M_realloc_insert (inlined into) Store::Put(int)
//        store.cc:12 < main main.cc:30 < __libc_start_call_main < _start              3 MiB
//   B  malloc < operator new < Store::Put(int) store.cc:14 < main main.cc:30 < ...    1 MiB
//   C  malloc < operator new < std::vector<int>::_M_realloc_insert < Store::Put(std::string
//        const&) store.cc:22 < main main.cc:31 < ...                                   2 MiB
//   D  malloc < _IO_file_doallocate < __libc_start_call_main < _start (all runtime)  512 KiB
// malloc, _IO_file_doallocate and __libc_start_call_main are in libc.so.6, operator new in
// libstdc++.so.6, the rest in /opt/app/bin/app. Exact (sample_interval=1): 6.5 MiB in 4 samples.
// Sites, by the default rule and short names: Store::Put 6 MiB flat (line 12 holds the most),
// malloc 512 KiB (its stack has no other site); main and the runtime frames only call.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "test_profiles.h"

namespace heaprec::test_support::runtime_stack {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

// Function ids.
enum : uint64_t {
  kMalloc = 1,
  kOperatorNew,
  kReallocInsert,
  kPutInt,
  kPutString,
  kMain,
  kLibcStartCallMain,
  kStart,
  kFileDoallocate,
};

inline Profile MakeRuntimeStackProfile() {
  Profile p = MakeNativeHeapProfile(1);
  p.comments = {"heaprec " HEAPREC_VERSION, "sample_interval=1"};
  p.mappings = {
      {.id = 1, .memory_start = 0x400000, .memory_limit = 0x500000, .filename = "/opt/app/bin/app"},
      {.id = 2,
       .memory_start = 0x7f0000000000,
       .memory_limit = 0x7f0000100000,
       .filename = "/usr/lib/x86_64-linux-gnu/libc.so.6"},
      {.id = 3,
       .memory_start = 0x7f0000200000,
       .memory_limit = 0x7f0000300000,
       .filename = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}};
  p.functions = {
      {.id = kMalloc, .name = "malloc", .system_name = "malloc"},
      {.id = kOperatorNew, .name = "operator new(unsigned long)", .system_name = "_Znwm"},
      {.id = kReallocInsert,
       .name = "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int "
               "const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > "
               ">, int const&)",
       .system_name = "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_"
                      "iteratorIPiS1_EEDpOT_",
       .filename = "/usr/include/c++/12/bits/vector.tcc",
       .start_line = 435},
      {.id = kPutInt,
       .name = "Store::Put(int)",
       .system_name = "_ZN5Store3PutEi",
       .filename = "/src/store.cc",
       .start_line = 10},
      {.id = kPutString,
       .name = "Store::Put(std::__cxx11::basic_string<char, std::char_traits<char>, "
               "std::allocator<char> > const&)",
       .system_name = "_ZN5Store3PutERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
       .filename = "/src/store.cc",
       .start_line = 20},
      {.id = kMain,
       .name = "main",
       .system_name = "main",
       .filename = "/src/main.cc",
       .start_line = 25},
      {.id = kLibcStartCallMain,
       .name = "__libc_start_call_main",
       .system_name = "__libc_start_call_main"},
      {.id = kStart, .name = "_start", .system_name = "_start"},
      {.id = kFileDoallocate, .name = "_IO_file_doallocate", .system_name = "_IO_file_doallocate"},
  };
  p.locations = {
      {.id = 1, .mapping_id = 2, .address = 0x7f0000001000, .lines = {{kMalloc, 0}}},
      {.id = 2, .mapping_id = 3, .address = 0x7f0000201000, .lines = {{kOperatorNew, 0}}},
      {.id = 3,
       .mapping_id = 1,
       .address = 0x401000,
       .lines = {{kReallocInsert, 440}, {kPutInt, 12}}},
      {.id = 4, .mapping_id = 1, .address = 0x401100, .lines = {{kPutInt, 14}}},
      {.id = 5, .mapping_id = 1, .address = 0x402000, .lines = {{kReallocInsert, 450}}},
      {.id = 6, .mapping_id = 1, .address = 0x403000, .lines = {{kPutString, 22}}},
      {.id = 7, .mapping_id = 1, .address = 0x404000, .lines = {{kMain, 30}}},
      {.id = 8, .mapping_id = 1, .address = 0x404100, .lines = {{kMain, 31}}},
      {.id = 9, .mapping_id = 2, .address = 0x7f0000002000, .lines = {{kLibcStartCallMain, 0}}},
      {.id = 10, .mapping_id = 1, .address = 0x400100, .lines = {{kStart, 0}}},
      {.id = 11, .mapping_id = 2, .address = 0x7f0000003000, .lines = {{kFileDoallocate, 0}}},
  };
  auto sample = [](std::vector<uint64_t> stack, int64_t objects, int64_t bytes) {
    return Sample{.location_ids = std::move(stack),
                  .values = {objects, bytes, objects, bytes},
                  .labels = {{.key = "bytes", .num = bytes / objects, .num_unit = "bytes"}}};
  };
  p.samples = {
      sample({1, 2, 3, 7, 9, 10}, 3, 3 * kMiB),     // A
      sample({1, 2, 4, 7, 9, 10}, 1, kMiB),         // B
      sample({1, 2, 5, 6, 8, 9, 10}, 2, 2 * kMiB),  // C
      sample({1, 11, 9, 10}, 1, 512 * kKiB),        // D
  };
  return p;
}

}  // namespace heaprec::test_support::runtime_stack
