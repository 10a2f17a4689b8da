// A small program with a known call tree, profiled by the flame-graph page test
// (flame_page_test.mjs) and for the README's screenshot. Built like the e2e workloads:
// -O1 -g -fno-omit-frame-pointer.
//
//   main
//   ├─ workload::BuildCache ─ workload::CacheInsert ─ workload::AllocateBuffer      live at exit
//   │                                               └ workload::NewIndexNode (always inlined)
//   │                                                  └ workload::AllocateBuffer   live at exit
//   ├─ workload::LoadConfig ─ std::string, std::vector<std::string> (libstdc++)    live at exit
//   ├─ workload::HandleRequests ─ workload::ParseRequest (std::string)   freed: alloc_* only
//   └─ workload::Recurse x9 ─ workload::AllocateBuffer                              live at exit
//
//   flame_workload [COUNT]   (default 2000)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace workload {

void* volatile g_sink;
std::vector<void*>* g_cache;         // never freed: what the profile shows as in use
std::vector<std::string>* g_config;  // never freed either

__attribute__((noinline)) void* AllocateBuffer(size_t size) {
  void* p = std::malloc(size);
  std::memset(p, 1, size);
  return p;
}

__attribute__((always_inline)) inline void* NewIndexNode(int i) {
  return AllocateBuffer(1024 + static_cast<size_t>(i % 4) * 512);
}

__attribute__((noinline)) void CacheInsert(int i) {
  g_cache->push_back(AllocateBuffer(1024 + static_cast<size_t>(i % 7) * 512));
  if (i % 2 == 0) g_cache->push_back(NewIndexNode(i));
}

__attribute__((noinline)) void BuildCache(int count) {
  for (int i = 0; i < count; ++i) CacheInsert(i);
}

__attribute__((noinline)) void LoadConfig(int count) {
  for (int i = 0; i < count; ++i) {
    g_config->emplace_back(400 + static_cast<size_t>(i % 200), static_cast<char>('a' + i % 26));
  }
}

__attribute__((noinline)) size_t ParseRequest(int i) {
  std::string request(700 + static_cast<size_t>(i % 600), 'x');
  g_sink = request.data();
  return request.size();
}

__attribute__((noinline)) size_t HandleRequests(int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += ParseRequest(i);
  return total;
}

__attribute__((noinline)) int Recurse(int depth) {
  if (depth == 0) {
    g_cache->push_back(AllocateBuffer(128 * 1024));
    return 0;
  }
  return Recurse(depth - 1) + 1;  // not a tail call: every level keeps its frame
}

}  // namespace workload

int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 2000;
  workload::g_cache = new std::vector<void*>;
  workload::g_cache->reserve(static_cast<size_t>(count) * 2 + 64);
  workload::g_config = new std::vector<std::string>;
  workload::BuildCache(count);
  workload::LoadConfig(count * 2);
  size_t parsed = workload::HandleRequests(count * 4);
  for (int i = 0; i < 16; ++i) workload::Recurse(8);
  std::printf("flame_workload: %zu cached, %zu bytes parsed\n", workload::g_cache->size(), parsed);
  return 0;
}
