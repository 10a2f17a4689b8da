// The demo program profiled by the README's first command: a toy key-value store that replays a
// generated request log. It holds memory in three ways a real service does:
//   - an index that only grows (every key ever written stays: the "leak"),
//   - values stored per key, replaced on overwrite (live, but bounded by the key count),
//   - per-request scratch buffers and parsed tokens (churn: freed again, never live at exit).
// It prints a one-line summary, so `heaprec run` can show the program's output is untouched.
// Sites are kept out of line (noinline) so the demo's report reads the same at any -O level.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Request {
  bool is_write;
  std::string key;
  std::string value;
};

// Deterministic request stream: a small generator so the demo needs no input file.
class RequestLog {
 public:
  explicit RequestLog(std::uint64_t seed) : state_(seed) {}
  Request Next() {
    std::uint64_t r = Step();
    Request request;
    request.is_write = r % 4 != 0;
    request.key = "user:" + std::to_string(Step() % 200000);
    if (request.is_write) request.value.assign(64 + Step() % 960, static_cast<char>('a' + r % 26));
    return request;
  }

 private:
  std::uint64_t Step() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  std::uint64_t state_;
};

// Splits a request line into tokens: the scratch allocations of request parsing.
__attribute__((noinline)) std::vector<std::string> Tokenize(const Request& request) {
  std::string line = (request.is_write ? "SET " : "GET ") + request.key + " " + request.value;
  std::vector<std::string> tokens;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ' ') {
      tokens.emplace_back(line, start, i - start);
      start = i + 1;
    }
  }
  return tokens;
}

class Store {
 public:
  __attribute__((noinline)) void Put(const std::string& key, const std::string& value) {
    auto buffer = std::make_unique<char[]>(value.size());  // values live in their own buffers
    value.copy(buffer.get(), value.size());
    values_[key] = {std::move(buffer), value.size()};
    RememberKey(key);
  }
  __attribute__((noinline)) std::size_t Get(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? 0 : it->second.size;
  }
  std::size_t size() const { return values_.size(); }

 private:
  struct Value {
    std::unique_ptr<char[]> bytes;
    std::size_t size;
  };
  // The history of every key ever written, never trimmed: grows for as long as the store runs.
  __attribute__((noinline)) void RememberKey(const std::string& key) {
    history_.push_back(new std::string(key));
  }

  std::unordered_map<std::string, Value> values_;
  std::vector<std::string*> history_;
};

}  // namespace

int main(int argc, char** argv) {
  long requests = argc > 1 ? std::atol(argv[1]) : 400000;
  // Like many services, the store lives for the whole process and is never torn down, so what it
  // holds is still on the heap when heaprec writes its profile at exit.
  Store& store = *new Store;
  RequestLog log(20261130);
  std::size_t bytes_read = 0;
  for (long i = 0; i < requests; ++i) {
    Request request = log.Next();
    std::vector<std::string> tokens = Tokenize(request);
    if (request.is_write) {
      store.Put(tokens[1], tokens[2]);
    } else {
      bytes_read += store.Get(tokens[1]);
    }
  }
  std::printf("kvstore: %ld requests, %zu keys, %zu bytes read\n", requests, store.size(),
              bytes_read);
  return 0;
}
