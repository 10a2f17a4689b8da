// A sampled native profile with known variances, for the tests of the top table and of its
// outputs (intervals, aligned columns, stacks).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "test_profiles.h"

namespace heaprec::test_support::interval {

// A hand-made sampled profile with known variances. Functions main (1), Build (2), Alloc (3), one
// location each; every sample has a `bytes` label. At T = 64 KiB:
//   A  Alloc <- Build <- main        650 objects of 1000 B
//   B  Build <- main                  80 objects of 4000 B
//   C  Alloc <- main <- main        2000 objects of 100 B (recursive: main counted once)
//   D  main                            2 objects of 1 MiB (p ~ 1: variance ~ 0)
constexpr int64_t kInterval = 64 * 1024;

struct Group {
  std::vector<uint64_t> stack;
  int64_t objects;
  int64_t size;
};
inline const Group kGroups[] = {
    {{3, 2, 1}, 650, 1000}, {{2, 1}, 80, 4000}, {{3, 1, 1}, 2000, 100}, {{1}, 2, 1 << 20}};

inline Profile IntervalProfile(int64_t period) {
  Profile p;
  p.sample_types = {{"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  p.period_type = {"space", "bytes"};
  p.period = period;
  p.default_sample_type = "inuse_space";
  p.functions = {{.id = 1, .name = "main", .filename = "/src/main.cc", .start_line = 5},
                 {.id = 2, .name = "Build", .filename = "/src/build.cc", .start_line = 7},
                 {.id = 3, .name = "Alloc", .filename = "/src/alloc.cc", .start_line = 9}};
  p.locations = {{.id = 1, .address = 0x10, .lines = {{1, 6}}},
                 {.id = 2, .address = 0x20, .lines = {{2, 8}}},
                 {.id = 3, .address = 0x30, .lines = {{3, 10}}}};
  for (const Group& g : kGroups) {
    p.samples.push_back({.location_ids = g.stack,
                         .values = {g.objects, g.objects * g.size},
                         .labels = {{.key = "bytes", .num = g.size, .num_unit = "bytes"}}});
  }
  return p;
}

// Var of N objects of s bytes estimated at interval T, computed here from the model's first
// principles: each object is sampled with p = 1 - exp(-(s+1)/T) and counts s/p bytes, so
// Var = N·s²·(1-p)/p (true variance; the report's estimate n·s²(1-p)/p² equals it at n = N·p).
inline double BytesVariance(const Group& g, int64_t period) {
  double p = 1 - std::exp(-(static_cast<double>(g.size) + 1) / static_cast<double>(period));
  double s = static_cast<double>(g.size);
  return static_cast<double>(g.objects) * s * s * (1 - p) / p;
}

}  // namespace heaprec::test_support::interval
