// What each workload site allocates and keeps, as groups of equal-sized objects: the ground truth
// the e2e tests compare profiles with. Mirrors the tables at the top of tests/workloads/*.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace heaprec::e2e {

struct Group {
  int64_t objects = 0;
  int64_t size = 0;
};

struct ExpectedSite {
  std::string name;
  std::vector<Group> allocated;  // every allocation ever made at the site
  std::vector<Group> live;       // the objects still live when the profile is written
  Values values;                 // the four values these groups add up to

  ExpectedSite(std::string site, std::vector<Group> all, std::vector<Group> kept)
      : name(std::move(site)), allocated(std::move(all)), live(std::move(kept)) {
    for (const Group& g : allocated) {
      values.alloc_objects += g.objects;
      values.alloc_space += g.objects * g.size;
    }
    for (const Group& g : live) {
      values.inuse_objects += g.objects;
      values.inuse_space += g.objects * g.size;
    }
  }
};

// tests/workloads/wl_c_sites.c
inline std::vector<ExpectedSite> CSites(int64_t count, int64_t churn) {
  std::vector<Group> grow_allocated;
  for (int64_t size = 1024; size <= 8192; size += 1024) grow_allocated.push_back({count / 8, size});
  return {
      {"site_malloc_live", {{count, 1000}}, {{count, 1000}}},
      {"site_calloc_live", {{count, 1200}}, {{count, 1200}}},
      {"site_realloc_grow", grow_allocated, {{count / 8, 8192}}},
      {"site_realloc_null", {{count, 1100}}, {{count, 1100}}},
      {"site_realloc_zero", {{count, 700}}, {}},
      {"site_realloc_fail", {{count, 900}}, {{count, 900}}},
      {"site_posix_memalign", {{count, 1024}}, {{count, 1024}}},
      {"site_aligned_alloc", {{count, 1280}}, {{count, 1280}}},
      {"site_memalign", {{count, 960}}, {{count, 960}}},
      {"site_freed_middle", {{count, 1000}}, {{count / 2, 1000}}},
      {"site_churn", {{churn, 500}}, {}},
  };
}

// A container's buffer history: every buffer allocated, and the size of the final one.
struct Growth {
  std::vector<Group> allocated;
  int64_t live_bytes = 0;
};

// std::vector<uint64_t>::push_back, `length` times from empty. libstdc++ (_M_check_len) grows
// the capacity to size + max(size, 1): 1, 2, 4, 8, ...
inline Growth VectorGrowth(int64_t length) {
  Growth g;
  int64_t capacity = 0;
  for (int64_t size = 0; size < length; ++size) {
    if (size == capacity) {
      capacity = capacity + (capacity > 0 ? capacity : 1);
      g.allocated.push_back({1, capacity * 8});
    }
  }
  g.live_bytes = capacity * 8;
  return g;
}

// std::string += char, `length` times from empty. libstdc++: 15 characters fit in the object
// itself; beyond, _M_create takes the needed capacity but at least twice the old one, and
// allocates capacity + 1 bytes (the terminator).
inline Growth StringGrowth(int64_t length) {
  Growth g;
  int64_t capacity = 15;
  for (int64_t size = 1; size <= length; ++size) {
    if (size > capacity) {
      int64_t wanted = size < 2 * capacity ? 2 * capacity : size;
      capacity = wanted;
      g.allocated.push_back({1, capacity + 1});
    }
  }
  g.live_bytes = g.allocated.empty() ? 0 : capacity + 1;
  return g;
}

// tests/workloads/wl_cxx_sites.cc
inline std::vector<ExpectedSite> CxxSites(int64_t count, int64_t churn, int64_t vector_length,
                                          int64_t string_length) {
  Growth vector = VectorGrowth(vector_length), string = StringGrowth(string_length);
  std::vector<Group> vector_live, string_live;
  if (vector.live_bytes > 0) vector_live.push_back({1, vector.live_bytes});
  if (string.live_bytes > 0) string_live.push_back({1, string.live_bytes});
  return {
      {"site_new_live", {{count, 1000}}, {{count / 2, 1000}}},
      {"site_new_array_live", {{count, 1200}}, {{count, 1200}}},
      {"site_new_aligned_live", {{count, 1024}}, {{count, 1024}}},
      {"site_new_nothrow_live", {{count, 1000}}, {{count, 1000}}},
      {"site_new_churn", {{churn, 1000}}, {}},
      {"site_new_array_churn", {{churn, 777}}, {}},
      {"site_vector_growth", vector.allocated, vector_live},
      {"site_string_growth", string.allocated, string_live},
  };
}

// tests/workloads/wl_threads.c
inline std::vector<ExpectedSite> ThreadSites(int64_t threads, int64_t per_thread) {
  std::vector<Group> allocated, live;
  for (int64_t t = 0; t < threads; ++t) {
    allocated.push_back({per_thread, 1000 + 8 * t});
    live.push_back({per_thread / 2, 1000 + 8 * t});
  }
  return {
      {"site_thread_alloc", allocated, live},
      {"site_thread_after", {{threads * per_thread, 2000}}, {{threads * per_thread, 2000}}},
      {"site_main_alloc_thread_free", {{threads * per_thread, 3000}}, {}},
  };
}

// Vec::push, `length` times from empty, of `element_size`-byte elements (2 to 1024 bytes). Rust's
// RawVec (grow_amortized) doubles the capacity, to at least 4 elements: 4, 8, 16, ...
inline Growth RustVecGrowth(int64_t length, int64_t element_size) {
  Growth g;
  int64_t capacity = 0;
  for (int64_t size = 0; size < length; ++size) {
    if (size == capacity) {
      capacity = std::max<int64_t>(2 * capacity, 4);
      g.allocated.push_back({1, capacity * element_size});
    }
  }
  g.live_bytes = capacity * element_size;
  return g;
}

// tests/workloads/wl_rust_sites.rs serving `requests` requests. `name` spells a site's name below
// the crate ("RequestLog::record") as the report shows it: the legacy and v0 manglings name a
// method differently. Cache::get_or_load is left out: the size of its hash table is hashbrown's.
inline std::vector<ExpectedSite> RustSites(
    int64_t requests, const std::function<std::string(const std::string&)>& name) {
  const int64_t users = std::min<int64_t>(requests, 500), sessions = (requests + 9) / 10;
  Growth log = RustVecGrowth(requests, 24), session_list = RustVecGrowth(sessions, 8);
  std::vector<Group> open_allocated = session_list.allocated;
  open_allocated.push_back({sessions, 1024});  // new_session, which it calls
  return {
      {name("load_value"), {{users, 4096}}, {{users, 4096}}},
      {name("new_session"), {{sessions, 1024}}, {{sessions, 1024}}},
      {name("format_entry"), {{requests, 64}}, {{requests, 64}}},
      {name("RequestLog::record"), log.allocated, {{1, log.live_bytes}}},
      {name("Server::open_session"),
       open_allocated,
       {{1, session_list.live_bytes}, {sessions, 1024}}},
  };
}

}  // namespace heaprec::e2e
