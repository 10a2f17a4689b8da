// The demo program that `scripts/demo.sh` profiles: a small catalogue service replaying generated
// requests. It holds memory in the four ways a real service does, each in a function of its own:
//   - a response cache, bounded (least recently used entries are evicted past 48 MiB): it grows
//     for the first part of the run, then stays flat; freed when the service shuts down;
//   - sessions that leak: a session and its connection point at each other through shared_ptr, so
//     closing a session (dropping the service's reference) frees neither; ~20 MiB by the end,
//     still on the heap at exit;
//   - a log of the pages rendered, a vector<string> that only grows; freed when the service
//     shuts down;
//   - per-request temporaries (parsed headers, the rendered page): many, each freed within its
//     request.
// The request stream is generated from a fixed seed, so every run does the same work. The service
// is torn down at the end of main (RAII), as a real one is: what is still live at exit is the leak.
// It prints one line of its own, on stdout. The markers `// site: NAME` are read by
// tests/e2e/demo_service_test.cc. Sites are kept out of line (noinline) so the report reads the
// same at any -O level.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t kMiB = 1024 * 1024;

// xorshift64: a deterministic request stream without an input file.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  // Skewed towards small values, as item popularity is: the cache gets hits.
  std::uint64_t Skewed(std::uint64_t n) {
    std::uint64_t a = Next() % n, b = Next() % n;
    return a < b ? a : b;
  }

 private:
  std::uint64_t state_;
};

struct Request {
  std::uint64_t user;
  std::uint64_t item;
};

// ---- Per-request temporaries: allocated and freed within one request.

// The request as it arrives on the wire, and parsed into its header fields.
__attribute__((noinline)) std::string ReadRequest(const Request& request) {
  std::string raw = "GET /catalogue/item/" + std::to_string(request.item) + "?view=full HTTP/1.1\n";
  raw += "Host: catalogue.example.org\n";
  raw += "User-Agent: Mozilla/5.0 (X11; Linux x86_64) demo/1.0\n";
  raw += "Accept: text/html,application/xhtml+xml,application/xml;q=0.9\n";
  raw += "Accept-Language: en-GB,en;q=0.8\n";
  raw += "Cookie: session=user-" + std::to_string(request.user) + "-0123456789abcdef\n";
  raw += "X-Request-Id: 00000000-0000-0000-0000-" + std::to_string(request.item * 7919) + "\n";
  return raw;
}

__attribute__((noinline)) std::map<std::string, std::string> ParseHeaders(const std::string& raw) {
  std::map<std::string, std::string> headers;  // site: (anonymous namespace)::ParseHeaders
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = raw.find('\n', start);
    std::string line = raw.substr(start, end - start);
    std::size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      headers.emplace(":request-line", line);
    } else {
      headers.emplace(line.substr(0, colon), line.substr(colon + 2));
    }
    start = end + 1;
  }
  return headers;
}

// The response: headers, then the page's body; its ETag is a hash of the whole.
__attribute__((noinline)) std::string RenderResponse(
    const std::map<std::string, std::string>& headers, const char* body, std::size_t body_size) {
  std::string response;  // site: (anonymous namespace)::RenderResponse
  response.reserve(body_size + 512);
  response += "HTTP/1.1 200 OK\nContent-Type: text/html\nX-Request-Id: ";
  response += headers.at("X-Request-Id");
  response += "\n\n";
  response.append(body, body_size);
  std::uint64_t etag = 14695981039346656037ull;
  for (std::size_t i = 0; i + 8 <= response.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, response.data() + i, 8);
    etag = (etag ^ word) * 1099511628211ull;
  }
  response += "\nETag: " + std::to_string(etag);
  return response;
}

// A page of the catalogue, made when it is not in the cache.
__attribute__((noinline)) std::string RenderPage(std::uint64_t item) {
  std::string page = "<html><head><title>item " + std::to_string(item) + "</title></head><body>";
  page.append(4096 + item % 8 * 1024, static_cast<char>('a' + item % 26));
  page += "</body></html>";
  return page;
}

// ---- The cache: bounded, so it plateaus once full.

class ResponseCache {
 public:
  explicit ResponseCache(std::size_t capacity) : capacity_(capacity) {}

  // The cached page of an item, or nullptr.
  const std::vector<char>* Find(std::uint64_t item) {
    auto it = index_.find(item);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);  // most recently used first
    return &it->second->page;
  }

  __attribute__((noinline)) const std::vector<char>& Insert(std::uint64_t item,
                                                            const std::string& page) {
    while (bytes_ + page.size() > capacity_ && !entries_.empty()) {
      bytes_ -= entries_.back().page.size();
      index_.erase(entries_.back().item);
      entries_.pop_back();
    }
    entries_.push_front(Entry{
        item,
        std::vector<char>(page.begin(),
                          page.end())});  // site: (anonymous namespace)::ResponseCache::Insert
    index_[item] = entries_.begin();
    bytes_ += page.size();
    return entries_.front().page;
  }

  std::size_t bytes() const { return bytes_; }
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t item;
    std::vector<char> page;
  };
  std::size_t capacity_;
  std::size_t bytes_ = 0;
  std::list<Entry> entries_;
  std::unordered_map<std::uint64_t, std::list<Entry>::iterator> index_;
};

// ---- Sessions: the leak. A session owns its connection and the connection points back at its
// session, both through shared_ptr: once the manager lets go, the two keep each other alive.

struct Connection;
struct Session {
  std::uint64_t user;
  std::vector<char> state;  // the user's cart, preferences, ...
  std::shared_ptr<Connection> connection;
};
struct Connection {
  std::vector<char> buffer;        // the socket's read buffer
  std::shared_ptr<Session> owner;  // the cycle (a std::weak_ptr would break it)
};

class SessionManager {
 public:
  __attribute__((noinline)) void Open(std::uint64_t user) {
    auto session = std::make_shared<Session>();
    session->user = user;
    session->state.assign(16 * 1024, 's');  // site: (anonymous namespace)::SessionManager::Open
    auto connection = std::make_shared<Connection>();
    connection->buffer.assign(4 * 1024, 'c');
    connection->owner = session;
    session->connection = connection;
    open_[user] = std::move(session);
    ++opened_;
  }
  // Forgets the session; the cycle keeps it (and its connection) on the heap.
  void Close(std::uint64_t user) { open_.erase(user); }
  void CloseAll() { open_.clear(); }
  std::size_t opened() const { return opened_; }

 private:
  std::unordered_map<std::uint64_t, std::shared_ptr<Session>> open_;
  std::size_t opened_ = 0;
};

// ---- The render log: one line per page rendered (a cache miss), never trimmed.

class RenderLog {
 public:
  __attribute__((noinline)) void Append(const Request& request, std::size_t bytes) {
    lines_.push_back(
        "rendered item=" +
        std::to_string(request.item) +  // site: (anonymous namespace)::RenderLog::Append
        " for user=" + std::to_string(request.user) + " bytes=" + std::to_string(bytes));
  }
  std::size_t size() const { return lines_.size(); }

 private:
  std::vector<std::string> lines_;
};

class Service {
 public:
  Service() : cache_(48 * kMiB) {}

  void Handle(const Request& request) {
    std::map<std::string, std::string> headers = ParseHeaders(ReadRequest(request));
    const std::vector<char>* cached = cache_.Find(request.item);
    if (cached != nullptr) {
      ++hits_;
    } else {
      cached = &cache_.Insert(request.item, RenderPage(request.item));
      log_.Append(request, cached->size());
    }
    std::string response = RenderResponse(headers, cached->data(), cached->size());
    bytes_sent_ += response.size();
    // A user's first request opens a session; every 64th request of the stream ends one.
    if (seen_users_.emplace(request.user, true).second) sessions_.Open(request.user);
    if (++requests_ % 64 == 0) sessions_.Close(request.user);
  }

  void Shutdown() { sessions_.CloseAll(); }

  void PrintSummary() const {
    std::printf(
        "service: %zu requests, %.0f MiB sent, cache %.1f MiB in %zu pages (%.0f%% hits), %zu "
        "sessions opened, %zu log lines\n",
        requests_, static_cast<double>(bytes_sent_) / kMiB,
        static_cast<double>(cache_.bytes()) / kMiB, cache_.size(),
        100.0 * static_cast<double>(hits_) / static_cast<double>(requests_), sessions_.opened(),
        log_.size());
  }

 private:
  ResponseCache cache_;
  SessionManager sessions_;
  RenderLog log_;
  std::unordered_map<std::uint64_t, bool> seen_users_;
  std::size_t requests_ = 0;
  std::size_t hits_ = 0;
  std::size_t bytes_sent_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  long requests = argc > 1 ? std::atol(argv[1]) : 600000;
  Random random(20261205);
  {
    Service service;
    for (long i = 0; i < requests; ++i) {
      // Users arrive over the whole run (a new one about every 600 requests), items are skewed.
      std::uint64_t users = 1 + static_cast<std::uint64_t>(i) / 600;
      service.Handle(Request{random.Next() % users, random.Skewed(12000)});
    }
    service.PrintSummary();
    service.Shutdown();
  }  // the cache and the log are freed here; the sessions are not
  return 0;
}
