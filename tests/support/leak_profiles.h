// Synthetic series of profiles whose leaks are known, for the tests of the leak series
// (analysis/leak_series.h) and of its outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/leak_series.h"
#include "test_profiles.h"

namespace heaprec::test_support::leaks {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000 * kSecond;  // CLOCK_REALTIME of the first profile

// Function (and location) ids of the synthetic profiles.
enum : uint64_t { kLeak = 1, kFlat, kChurn, kMain, kCallerA, kCallerB, kTemplate };

struct Group {
  uint64_t leaf;
  int64_t objects;  // inuse_objects
  int64_t size;     // bytes per object
  uint64_t caller = kMain;
  int64_t age_ns = -1;  // the age_ns label; -1: none
};

// Replaces the reason=... field of a profile made by MakeProfile.
inline void SetReason(Profile& p, const std::string& reason) {
  std::string& comment = p.comments.front();
  size_t at = comment.find(" reason=");
  size_t end = comment.find(' ', at + 1);
  comment.replace(at + 1, end - at - 1, "reason=" + reason);
}

inline Profile MakeProfile(int64_t pid, int64_t time_nanos, int64_t period,
                           const std::vector<Group>& groups) {
  Profile p = MakeNativeHeapProfile(period);
  p.time_nanos = time_nanos;
  p.comments = {"heaprec " HEAPREC_VERSION " pid=" + std::to_string(pid) +
                    " reason=interval sample_interval=" + std::to_string(period),
                "samples=0 dropped=0"};
  p.mappings.push_back(
      {.id = 1, .memory_start = 0x1000, .memory_limit = 0x9000, .filename = "/bin/app"});
  const char* names[] = {"",     "leak",     "flat",     "churn",
                         "main", "caller_a", "caller_b", "std::vector<int, A<&x>>::grow"};
  for (uint64_t id = kLeak; id <= kTemplate; ++id) {
    p.functions.push_back({.id = id,
                           .name = names[id],
                           .filename = "/src/app.c",
                           .start_line = static_cast<int64_t>(10 * id)});
    p.locations.push_back({.id = id,
                           .mapping_id = 1,
                           .address = 0x1000 + 16 * id,
                           .lines = {{.function_id = id, .line = static_cast<int64_t>(10 * id)}}});
  }
  for (const Group& g : groups) {
    Sample s;
    s.location_ids = {g.leaf, g.caller};
    if (g.caller != kMain) s.location_ids.push_back(kMain);
    s.values = {g.objects, g.objects * g.size, g.objects, g.objects * g.size};
    s.labels.push_back({.key = "bytes", .num = g.size, .num_unit = "bytes"});
    if (g.age_ns >= 0) {
      s.labels.push_back({.key = "age_ns", .num = g.age_ns, .num_unit = "nanoseconds"});
    }
    p.samples.push_back(s);
  }
  return p;
}

inline const analysis::LeakSite* Find(const analysis::LeakSeries& s, const std::string& name) {
  for (const analysis::LeakSite& site : s.sites) {
    if (site.name == name) return &site;
  }
  return nullptr;
}

// Twelve profiles 100 ms apart of one process: `leak` grows by 100 objects of 1 KiB per profile,
// `flat` holds 1 MiB, `churn` holds 0 or 64 KiB.
inline std::vector<analysis::LeakInput> ThreeSites(int64_t pid, int64_t period,
                                                   int64_t leak_objects_per_step = 100,
                                                   bool ages = false) {
  std::vector<analysis::LeakInput> inputs;
  const int churn[] = {0, 64, 0, 0, 64, 64, 0, 64, 0, 0, 64, 0};
  for (int i = 0; i < 12; ++i) {
    int64_t now = kT0 + i * kSecond / 10;
    std::vector<Group> groups = {
        {.leaf = kLeak,
         .objects = leak_objects_per_step * (i + 1),
         .size = 1024,
         .age_ns = ages ? now - (kT0 - kSecond) : -1},
        {.leaf = kFlat, .objects = 16, .size = 65536, .age_ns = ages ? kSecond : -1},
        {.leaf = kChurn, .objects = churn[i], .size = 1024},
    };
    inputs.push_back({"p." + std::to_string(pid) + "." + std::to_string(i) + ".pb.gz",
                      MakeProfile(pid, now, period, groups)});
  }
  return inputs;
}

// Profiles 1 s apart of one process in which `leak` holds objects[i] objects of `size` bytes at
// the i-th, sampled every `period` bytes (1: exact). The plateau tests' series.
inline std::vector<analysis::LeakInput> OneSite(const std::vector<int64_t>& objects, int64_t size,
                                                int64_t period = 1, int64_t pid = 7) {
  std::vector<analysis::LeakInput> inputs;
  for (size_t i = 0; i < objects.size(); ++i) {
    std::vector<Group> groups = {{.leaf = kLeak, .objects = objects[i], .size = size}};
    inputs.push_back({"p." + std::to_string(pid) + "." + std::to_string(i) + ".pb.gz",
                      MakeProfile(pid, kT0 + static_cast<int64_t>(i) * kSecond, period, groups)});
  }
  return inputs;
}

}  // namespace heaprec::test_support::leaks
