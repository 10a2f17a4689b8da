// A small C++ program of the kind users profile, built with -O2 -g: a templated cache that never
// evicts, a request log that only grows, an inlined helper, and buffers from std::make_unique.
// Every allocation goes through the standard library, so the frames nearest malloc are
// operator new, std::__new_allocator, basic_string and _Hashtable internals; user_sites_test.cc
// checks that heaprec's report names the user's functions instead, each at the line of its
// allocating call, marked below with "// site:" and the function's short name.
//
//   user_sites    (no arguments; prints one line)
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace thumbs {

constexpr size_t kThumbnailBytes = 4096;

template <typename Key, typename Value>
class Cache {
 public:
  __attribute__((noinline)) const Value& GetOrCreate(const Key& key) {
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    auto [inserted, _] =
        entries_.emplace(key, Value(kThumbnailBytes, 'x'));  // site: thumbs::Cache::GetOrCreate
    return inserted->second;
  }
  size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<Key, Value> entries_;
};

}  // namespace thumbs

namespace {

// Inlined into its caller: its allocation is charged to it, at its own line, all the same.
inline __attribute__((always_inline)) std::string Describe(int id) {
  std::string text;
  text.reserve(120);  // site: (anonymous namespace)::Describe
  text.append("request ").append(std::to_string(id)).append(80, ' ');
  return text;
}

class RequestLog {
 public:
  __attribute__((noinline)) void Record(int id) {
    lines_.push_back(Describe(id));  // site: (anonymous namespace)::RequestLog::Record
  }
  size_t size() const { return lines_.size(); }

 private:
  std::vector<std::string> lines_;
};

class Buffers {
 public:
  __attribute__((noinline)) void Add(size_t bytes) {
    buffers_.push_back(
        std::make_unique<char[]>(bytes));  // site: (anonymous namespace)::Buffers::Add
  }

 private:
  std::vector<std::unique_ptr<char[]>> buffers_;
};

// Allocates and frees: holds nothing at exit, so it must not appear in the live report.
__attribute__((noinline)) size_t Churn(int rounds) {
  size_t total = 0;
  for (int i = 0; i < rounds; ++i) {
    std::vector<std::string> scratch(64, std::string(200, 'c'));
    total += scratch.size();
  }
  return total;
}

}  // namespace

// Held until exit on purpose (the live report is of the exit profile): a cache of 4000
// thumbnails (about 16 MiB), 64 buffers of 128 KiB (8 MiB), 40000 log lines (about 4.6 MiB of
// strings in Describe, and the log's array, 2 MiB at its last growth, in Record).
thumbs::Cache<int, std::string>* g_cache = new thumbs::Cache<int, std::string>;
RequestLog* g_log = new RequestLog;
Buffers* g_buffers = new Buffers;

int main() {
  for (int i = 0; i < 4000; ++i) g_cache->GetOrCreate(i % 4000);
  for (int i = 0; i < 64; ++i) g_buffers->Add(128 * 1024);
  for (int i = 0; i < 40000; ++i) g_log->Record(i);
  size_t churned = Churn(100);
  std::printf("cache %zu, log %zu, churned %zu\n", g_cache->size(), g_log->size(), churned);
  return 0;
}
