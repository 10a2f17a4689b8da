// dump_cost N [PROFILE_PATH]: how long heaprec_dump() takes with N live sampled objects.
//
// Runs under LD_PRELOAD=libheaprec.so; forces exact mode (every allocation sampled), allocates N
// live objects from ~1000 distinct call stacks (paths through the distinct call sites of
// micro_common.h, ~20 frames deep, one size per stack), then times heaprec_dump(PROFILE_PATH)
// through the public API with CLOCK_MONOTONIC. Prints exactly one JSON line on stdout (bench/run.py
// parses it):
//   {"live_samples": N, "dump_seconds": S, "file_bytes": B}
// Without PROFILE_PATH the profile goes to $TMPDIR (or /tmp) and is removed afterwards. Exits with
// _exit so heaprec writes no second, exit-time profile of the same objects. Status 2 on a usage
// error or when heaprec is not loaded, 1 when the dump fails.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "micro_common.h"

namespace {

constexpr std::uint64_t kStacks = 1000;
constexpr int kLevels = 12;

struct Allocation {
  std::size_t size;
  void* block;
};

__attribute__((noinline)) void AllocateLeaf(void* arg) {
  auto* a = static_cast<Allocation*>(arg);
  a->block = malloc(a->size);
  heaprec_bench::Opaque(a->block);
}

}  // namespace

int main(int argc, char** argv) {
  char* end = nullptr;
  unsigned long long n = argc >= 2 ? strtoull(argv[1], &end, 10) : 0;
  if (argc < 2 || argc > 3 || *end != '\0' || n == 0) {
    fprintf(stderr, "usage: dump_cost N [PROFILE_PATH]   (under LD_PRELOAD=libheaprec.so)\n");
    return 2;
  }
  if (const char* why = heaprec_bench::UseSampleInterval(1)) {
    fprintf(stderr, "dump_cost: %s\n", why);
    return 2;
  }
  heaprec_bench::HeaprecApi api = heaprec_bench::HeaprecApi::Load();
  if (api.dump == nullptr) {
    fprintf(stderr, "dump_cost: heaprec_dump not found\n");
    return 2;
  }

  char path[4096];
  bool remove_after = argc < 3;
  if (remove_after) {
    const char* dir = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/heaprec-dump-cost.%d.pb.gz",
             dir != nullptr && dir[0] != '\0' ? dir : "/tmp", static_cast<int>(getpid()));
  } else {
    snprintf(path, sizeof(path), "%s", argv[2]);
  }

  // The objects stay live (and their block pointers are kept reachable) until the process exits.
  auto* blocks = static_cast<void**>(__libc_malloc(n * sizeof(void*)));
  for (unsigned long long i = 0; i < n; ++i) {
    std::uint64_t stack = i % kStacks;
    Allocation a{16 + 8 * (stack % 32), nullptr};
    heaprec_bench::Descend(kLevels, stack, AllocateLeaf, &a);
    blocks[i] = a.block;
  }
  heaprec_bench::Opaque(blocks);

  std::uint64_t t0 = heaprec_bench::NowNs();
  int error = api.dump(path);
  std::uint64_t t1 = heaprec_bench::NowNs();
  struct stat st;
  if (error != 0 || stat(path, &st) != 0) {
    fprintf(stderr, "dump_cost: heaprec_dump(\"%s\") failed: %s\n", path, strerror(-error));
    _exit(1);
  }
  printf("{\"live_samples\": %llu, \"dump_seconds\": %.6f, \"file_bytes\": %lld}\n", n,
         static_cast<double>(t1 - t0) * 1e-9, static_cast<long long>(st.st_size));
  fflush(stdout);
  if (remove_after) unlink(path);
  _exit(0);
}
