// Hand-made profiles with a known difference, for the tests of the diff, of its outputs and of
// `heaprec diff`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "test_profiles.h"

namespace heaprec::test_support::diff {

// Functions (one location each, id = function id): main 1, Build 2, Alloc 3, Old 4, New 5.
enum : uint64_t { kMain = 1, kBuild = 2, kAlloc = 3, kOld = 4, kNew = 5 };

struct Group {
  std::vector<uint64_t> stack;  // leaf first
  int64_t objects;
  int64_t size;
};

inline Profile MakeProfile(int64_t period, const std::vector<Group>& groups) {
  Profile p = MakeNativeHeapProfile(period);
  p.comments = {"sample_interval=" + std::to_string(period)};
  p.mappings = {{.id = 1, .memory_start = 0x400000, .memory_limit = 0x500000, .filename = "/app"}};
  const char* names[] = {"", "main", "Build", "Alloc", "Old", "New"};
  for (uint64_t id = kMain; id <= kNew; ++id) {
    p.functions.push_back({.id = id,
                           .name = names[id],
                           .system_name = names[id],
                           .filename = "/src/" + std::string(names[id]) + ".cc",
                           .start_line = static_cast<int64_t>(id)});
    p.locations.push_back(
        {.id = id, .mapping_id = 1, .address = 0x400000 + id * 0x10, .lines = {{id, 1}}});
  }
  for (const Group& g : groups) {
    int64_t bytes = g.objects * g.size;
    p.samples.push_back({.location_ids = g.stack,
                         .values = {g.objects, bytes, g.objects, bytes},
                         .labels = {{.key = "bytes", .num = g.size, .num_unit = "bytes"}}});
  }
  return p;
}

// Exact profiles (period 1) with a known difference:
//   stack                 base          new           change
//   Alloc <- Build <- main 100 x 1000   300 x 1000    +200000
//   Build <- main          10 x 4000    5 x 4000      -20000
//   Old <- main            5 x 2000     -             -10000
//   New <- main            -            1 x 7000      +7000
//   Alloc <- main          -            3 x 1000      +3000
inline Profile ExactBase() {
  return MakeProfile(1, {{{kAlloc, kBuild, kMain}, 100, 1000},
                         {{kBuild, kMain}, 10, 4000},
                         {{kOld, kMain}, 5, 2000}});
}
inline Profile ExactNew() {
  return MakeProfile(1, {{{kAlloc, kBuild, kMain}, 300, 1000},
                         {{kBuild, kMain}, 5, 4000},
                         {{kNew, kMain}, 1, 7000},
                         {{kAlloc, kMain}, 3, 1000}});
}

}  // namespace heaprec::test_support::diff
