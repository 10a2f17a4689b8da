// One HTTP POST per profile, behind an interface so that the pusher's queue, retries and ledger are
// unit-tested without a network (tests/push). CurlTransport is libcurl's, in the heaprec command
// only: https, and basic auth from the URL's user:password@, come with it; it also GETs a profile
// for `heaprec fetch`.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace heaprec::push {

struct Response {
  long status = 0;     // the HTTP status; 0 when no answer came
  std::string detail;  // the server's reply (its first line, shortened), or why none came
};

class Transport {
 public:
  virtual ~Transport() = default;
  // POSTs `body` to `url` with `headers` ("Name: value"); never throws.
  virtual Response Post(const std::string& url, const std::vector<std::string>& headers,
                        const std::string& body) = 0;
};

struct CurlTimeouts {
  double connect_seconds = 5;   // a dead or unreachable server
  double request_seconds = 30;  // a server that accepted the connection but does not answer
};

class CurlTransport : public Transport {
 public:
  explicit CurlTransport(CurlTimeouts timeouts);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Response Post(const std::string& url, const std::vector<std::string>& headers,
                const std::string& body) override;
  // GETs `url` into *body (for `heaprec fetch`), at most `limit` bytes: a larger answer is a
  // failure (status 0). `detail` is the body's first line, or why no answer came.
  Response Get(const std::string& url, std::size_t limit, std::string* body);

  // A request still under way at this time (CLOCK_MONOTONIC seconds) is abandoned: how the run's
  // bounded wait for its last pushes is kept even with a request in flight. Any thread may call it.
  void AbortAt(double monotonic_seconds) { abort_at_.store(monotonic_seconds); }

 private:
  static int Progress(void* self, long long, long long, long long, long long);
  std::string Unavailable() const;
  Response Perform(const std::string& url, void* reply);
  CurlTimeouts timeouts_;
  void* handle_ = nullptr;  // CURL*, reused so that connections are kept alive between requests
  std::atomic<double> abort_at_{1e300};
};

// CLOCK_MONOTONIC in seconds.
double MonotonicNow();

}  // namespace heaprec::push
