// The decoded-memory budget (ReadOptions::max_decoded_bytes) is an estimate; these tests keep it
// honest by measuring what ReadProfile really allocates with operator new. A separate executable,
// as it replaces the global operator new and delete.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <protozero/pbf_writer.hpp>
#include <string>
#include <vector>

#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace {

// Bytes in live operator-new blocks, and their peak since the last ResetPeak().
std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void* Allocate(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  size_t live = g_live.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
  size_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}

void Free(void* p) {
  if (p == nullptr) return;
  g_live.fetch_sub(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, size_t) noexcept { Free(p); }
void operator delete[](void* p, size_t) noexcept { Free(p); }

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

// Peak heap (operator new) that decoding `raw` takes beyond what was live before.
size_t MeasuredPeak(const std::string& raw) {
  size_t before = g_live.load();
  g_peak.store(before);
  Profile p = ReadProfile(raw);
  return g_peak.load() - before;
}

// The smallest budget with which `raw` decodes: what the reader charges for it.
size_t Charged(const std::string& raw) {
  size_t low = 0, high = size_t{1} << 34;  // low fails, high succeeds
  while (high - low > 1) {
    size_t mid = low + (high - low) / 2;
    ReadOptions options;
    options.max_decoded_bytes = mid;
    try {
      ReadProfile(raw, "input", options);
      high = mid;
    } catch (const ProfileError&) {
      low = mid;
    }
  }
  return high;
}

// The charge must be close to reality: not much below (the budget would not bound memory), nor
// far above (profiles that fit would be refused).
void ExpectChargeNearReality(const std::string& raw, const char* what) {
  size_t measured = MeasuredPeak(raw);
  size_t charged = Charged(raw);
  SCOPED_TRACE(std::string(what) + ": measured " + std::to_string(measured) + ", charged " +
               std::to_string(charged));
  EXPECT_GE(charged, measured * 9 / 10);
  EXPECT_LE(charged, measured * 5 / 4);
}

std::string EncodeRaw(const Profile& p) { return EncodeProfile(p, /*gzip=*/false); }

TEST(DecodeBudgetTest, EmptySamples) {
  std::string raw("\x32\x00", 2);
  for (int i = 0; i < 200'000; ++i) raw.append("\x12\x00", 2);
  ExpectChargeNearReality(raw, "empty samples");
}

TEST(DecodeBudgetTest, SamplesWithValuesLocationsAndLabels) {
  Profile p = test_support::MakeFullProfile();
  Profile big = p;
  for (int i = 0; i < 20'000; ++i) {
    for (Sample s : p.samples) {
      s.values[0] = i;
      big.samples.push_back(s);
    }
  }
  ExpectChargeNearReality(EncodeRaw(big), "samples");
}

TEST(DecodeBudgetTest, LocationsFunctionsAndLongStrings) {
  Profile p;
  for (uint64_t id = 1; id <= 20'000; ++id) {
    std::string name = "namespace_with_a_long_name::Function" + std::to_string(id) + "(int)";
    p.functions.push_back({.id = id, .name = name, .system_name = "_Z" + name});
    p.locations.push_back({.id = id, .address = id * 16, .lines = {{id, 10}, {1, 20}}});
  }
  p.mappings.push_back({.id = 1, .filename = std::string(100, 'f')});
  ExpectChargeNearReality(EncodeRaw(p), "locations");
}

TEST(DecodeBudgetTest, ARepeatedLongString) {
  std::string raw;
  {
    protozero::pbf_writer w(raw);
    w.add_string(6, "");
    w.add_string(6, std::string(100'000, 'k'));
    protozero::pbf_writer sample(w, 2);
    for (int i = 0; i < 100; ++i) {
      protozero::pbf_writer label(sample, 3);
      label.add_int64(1, 1);
    }
  }
  ExpectChargeNearReality(raw, "repeated string");
}

}  // namespace
}  // namespace heaprec
