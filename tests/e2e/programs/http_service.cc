// A C++ service of the kind the HTTP endpoint serves in production, built as users build theirs:
// -O2 -g (tests/e2e/CMakeLists.txt). http_endpoint_test.cc fetches its live heap with the real
// go tool pprof, the standalone pprof and `heaprec fetch`, which must name its functions.
//
//   http_service    allocate, print "ready", then wait for the end of stdin; print "done", exit 0
//
// At start: 256 sessions of 16 KiB in Registry::Open (4 MiB live), and 64 entries of 1 KiB in
// (anonymous namespace)::Journal::Append, kept until exit.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace service {

class Registry {
 public:
  __attribute__((noinline)) void Open(int id) {
    sessions_.push_back(std::make_unique<char[]>(16 * 1024));  // site: service::Registry::Open
    sessions_.back()[0] = static_cast<char>(id);
  }
  size_t size() const { return sessions_.size(); }

 private:
  std::vector<std::unique_ptr<char[]>> sessions_;
};

}  // namespace service

namespace {

class Journal {
 public:
  __attribute__((noinline)) void Append(int id) {
    entries_.emplace_back(1024, static_cast<char>('a' + id % 26));  // site: Journal::Append
  }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::string> entries_;
};

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  service::Registry registry;
  Journal journal;
  for (int i = 0; i < 256; ++i) registry.Open(i);
  for (int i = 0; i < 64; ++i) journal.Append(i);
  std::printf("ready\n");
  char line[64];
  while (std::fgets(line, sizeof(line), stdin) != nullptr) {
  }
  std::printf("done %zu %zu\n", registry.size(), journal.size());
  return 0;
}
