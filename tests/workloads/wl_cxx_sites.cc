// The C++ allocation functions and standard containers, one site function each.
//
//   wl_cxx_sites [COUNT [CHURN [VECTOR_LEN [STRING_LEN]]]]   (defaults 100, 1000, 1000, 1000)
//
// Site                     allocation                               live at exit
// site_new_live            COUNT x new Obj1000 (1000 bytes)         all
// site_new_array_live      COUNT x new int[300] (1200 bytes)        all
// site_new_aligned_live    COUNT x new Aligned64 (alignas(64), 1024 bytes: operator new(size,
// align))
//                                                                   all
// site_new_nothrow_live    COUNT x new (std::nothrow) Obj1000       all
// site_new_churn           CHURN x (new Obj1000; delete)            none
// site_new_array_churn     CHURN x (new char[777]; delete[])        none
// site_vector_growth       one std::vector<uint64_t>, VECTOR_LEN push_backs (libstdc++ doubles
//                          the capacity: 1, 2, 4, ...): only the final buffer live
// site_string_growth       one std::string, STRING_LEN appends of one char (libstdc++: capacity
//                          15 in place, then max(needed, 2 x old): 30, 60, ...; allocates
//                          capacity + 1): only the final buffer live
//
// Half of site_new_live's objects are deleted again (every odd index) in the middle of the run, so
// live = COUNT/2 there; COUNT must be even. Prints one line to stdout.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "wl_common.h"

namespace {

struct Obj1000 {
  char bytes[1000];
};
struct alignas(64) Aligned64 {
  char bytes[1024];
};
static_assert(sizeof(Obj1000) == 1000 && sizeof(Aligned64) == 1024);

void** g_new;
void** g_array;
void** g_aligned;
void** g_nothrow;
std::vector<std::uint64_t>* g_vector;
std::string* g_string;

}  // namespace

__attribute__((noinline)) void site_new_live(long count) {
  for (long i = 0; i < count; ++i) g_new[i] = wl_opaque(new Obj1000);
}

__attribute__((noinline)) void site_new_array_live(long count) {
  for (long i = 0; i < count; ++i) g_array[i] = wl_opaque(new int[300]);
}

__attribute__((noinline)) void site_new_aligned_live(long count) {
  for (long i = 0; i < count; ++i) {
    auto* p = new Aligned64;
    if (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) std::abort();
    g_aligned[i] = wl_opaque(p);
  }
}

__attribute__((noinline)) void site_new_nothrow_live(long count) {
  for (long i = 0; i < count; ++i) g_nothrow[i] = wl_opaque(wl_check(new (std::nothrow) Obj1000));
}

__attribute__((noinline)) void site_new_churn(long churn) {
  for (long i = 0; i < churn; ++i) delete static_cast<Obj1000*>(wl_opaque(new Obj1000));
}

__attribute__((noinline)) void site_new_array_churn(long churn) {
  for (long i = 0; i < churn; ++i) delete[] static_cast<char*>(wl_opaque(new char[777]));
}

__attribute__((noinline)) void site_vector_growth(long length) {
  for (long i = 0; i < length; ++i) g_vector->push_back(static_cast<std::uint64_t>(i));
  wl_opaque(g_vector->data());
}

__attribute__((noinline)) void site_string_growth(long length) {
  for (long i = 0; i < length; ++i) *g_string += static_cast<char>('a' + i % 26);
  wl_opaque(g_string->data());
}

int main(int argc, char** argv) {
  long count = wl_arg(argc, argv, 1, 100);
  long churn = wl_arg(argc, argv, 2, 1000);
  long vector_length = wl_arg(argc, argv, 3, 1000);
  long string_length = wl_arg(argc, argv, 4, 1000);
  if (count % 2 != 0) {
    std::fprintf(stderr, "COUNT must be even\n");
    return 64;
  }
  g_new = wl_slots(count);
  g_array = wl_slots(count);
  g_aligned = wl_slots(count);
  g_nothrow = wl_slots(count);
  // The containers live in static storage and are never destroyed (a static object's destructor
  // would free the buffers before the exit profile is written); only their buffers are on the heap.
  alignas(std::vector<std::uint64_t>) static unsigned char
      vector_storage[sizeof(std::vector<std::uint64_t>)];
  alignas(std::string) static unsigned char string_storage[sizeof(std::string)];
  g_vector = new (vector_storage) std::vector<std::uint64_t>;
  g_string = new (string_storage) std::string;

  site_new_live(count);
  site_new_churn(churn / 2);
  site_new_array_live(count);
  site_vector_growth(vector_length);
  for (long i = 1; i < count; i += 2) delete static_cast<Obj1000*>(g_new[i]);
  site_new_aligned_live(count);
  site_new_nothrow_live(count);
  site_string_growth(string_length);
  site_new_churn(churn - churn / 2);
  site_new_array_churn(churn);
  std::printf("cxx-sites count=%ld churn=%ld vector=%zu string=%zu\n", count, churn,
              g_vector->capacity(), g_string->capacity());
  return 0;
}
