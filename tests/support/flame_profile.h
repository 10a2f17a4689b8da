// A native profile with a known call tree (inlined frames, recursion, unsymbolized addresses),
// for the tests of the flame graph, of its page and of `heaprec flame`.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "test_profiles.h"

namespace heaprec::test_support::flame {

enum Type { kAllocObjects, kAllocSpace, kInuseObjects, kInuseSpace };
constexpr int64_t kPeriod = 524288;

inline Sample MakeSample(std::vector<uint64_t> locations, int64_t alloc_objects,
                         int64_t inuse_objects, int64_t size) {
  return {.location_ids = std::move(locations),
          .values = {alloc_objects, alloc_objects * size, inuse_objects, inuse_objects * size},
          .labels = {{.key = "bytes", .num = size, .num_unit = "bytes"}}};
}

// main (main.cc:11) calls ns::Build (build.cc:22) into which ns::Inner (inner.h:31) is inlined,
// which calls Alloc (alloc.cc:41, 45). main also calls itself and an unsymbolized 0x1234 in
// libfoo.so. Locations are leaf first, lines innermost first, as in heaprec's profiles.
inline Profile MakeKnownProfile(int64_t period) {
  Profile p = MakeNativeHeapProfile(period);
  p.mappings = {
      {.id = 1, .memory_start = 0x400000, .memory_limit = 0x500000, .filename = "/opt/app/bin/app"},
      {.id = 2, .memory_start = 0x1000, .memory_limit = 0x2000, .filename = "/usr/lib/libfoo.so"}};
  p.functions = {
      {.id = 1, .name = "main", .filename = "/src/main.cc", .start_line = 10},
      {.id = 2, .name = "ns::Build(int)", .filename = "/src/build.cc", .start_line = 20},
      {.id = 3, .name = "ns::Inner()", .filename = "/src/inner.h", .start_line = 30},
      {.id = 4, .name = "Alloc", .filename = "/src/alloc.cc", .start_line = 40},
  };
  p.locations = {
      {.id = 1, .mapping_id = 1, .address = 0x401000, .lines = {{4, 41}}},
      {.id = 2, .mapping_id = 1, .address = 0x402000, .lines = {{3, 31}, {2, 22}}},
      {.id = 3, .mapping_id = 1, .address = 0x403000, .lines = {{1, 11}}},
      {.id = 4, .mapping_id = 2, .address = 0x1234},
      {.id = 5, .mapping_id = 1, .address = 0x401100, .lines = {{4, 45}}},
      {.id = 6, .address = 0x9999},
  };
  p.samples = {
      MakeSample({1, 2, 3}, 10, 4, 1024),  // main > Build > Inner > Alloc (line 41)
      MakeSample({5, 2, 3}, 6, 6, 512),    // main > Build > Inner > Alloc (line 45)
      MakeSample({2, 3}, 3, 1, 4096),      // main > Build > Inner
      MakeSample({4, 3}, 7, 0, 64),        // main > 0x1234 (libfoo.so): freed
      MakeSample({3, 3}, 2, 2, 100),       // main > main (recursion)
      MakeSample({6}, 1, 1, 8),            // 0x9999, in no mapping
      MakeSample({77, 3}, 5, 5, 16),       // an unknown location id is skipped: main
  };
  return p;
}

}  // namespace heaprec::test_support::flame
