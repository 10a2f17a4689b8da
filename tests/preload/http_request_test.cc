// The HTTP endpoint's pure parts: the request-head parser (preload/http/request.h) and
// HEAPREC_HTTP's address syntax (preload/http/address.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>

#include "preload/http/address.h"
#include "preload/http/request.h"

namespace heaprec::preload {
namespace {

constexpr std::size_t kCapacity = 8192;

HttpRequest Parse(const std::string& head, std::size_t capacity = kCapacity) {
  return ParseHttpRequest(head.data(), head.size(), capacity);
}

HttpVerdict VerdictOf(const std::string& head) { return Parse(head).verdict; }

TEST(HttpRequestTest, ServesTheHeapProfile) {
  HttpRequest get = Parse("GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\nUser-Agent: Go\r\n\r\n");
  EXPECT_EQ(get.verdict, HttpVerdict::kServe);
  EXPECT_FALSE(get.head_only);
  HttpRequest head = Parse("HEAD /debug/pprof/heap HTTP/1.0\r\n\r\n");
  EXPECT_EQ(head.verdict, HttpVerdict::kServe);
  EXPECT_TRUE(head.head_only);
  // Bare LF line ends, a few empty lines before the request line, absolute form, Go's parameters.
  EXPECT_EQ(VerdictOf("GET /debug/pprof/heap HTTP/1.1\nHost: x\n\n"), HttpVerdict::kServe);
  EXPECT_EQ(VerdictOf("\r\n\r\nGET /debug/pprof/heap HTTP/1.1\r\n\r\n"), HttpVerdict::kServe);
  EXPECT_EQ(VerdictOf("GET http://127.0.0.1:6060/debug/pprof/heap HTTP/1.1\r\n\r\n"),
            HttpVerdict::kServe);
  for (const char* query :
       {"?gc=1", "?debug=0", "?seconds=0", "?gc=1&debug=0&x", "?", "?seconds="}) {
    EXPECT_EQ(VerdictOf(std::string("GET /debug/pprof/heap") + query + " HTTP/1.1\r\n\r\n"),
              HttpVerdict::kServe)
        << query;
  }
}

TEST(HttpRequestTest, WaitsForTheWholeHead) {
  std::string full = "GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n\r\n";
  for (std::size_t n = 0; n < full.size(); ++n) {
    EXPECT_EQ(VerdictOf(full.substr(0, n)), HttpVerdict::kIncomplete) << n;
  }
  EXPECT_EQ(VerdictOf(full), HttpVerdict::kServe);
}

// Go's other paths users try first: the index and allocs (the heap profile opening on
// alloc_space).
TEST(HttpRequestTest, ServesTheIndexAndAllocs) {
  for (const char* index :
       {"GET /debug/pprof/ HTTP/1.1\r\n\r\n", "GET /debug/pprof HTTP/1.1\r\n\r\n",
        "GET http://h:1/debug/pprof/?x=1 HTTP/1.1\r\n\r\n"}) {
    EXPECT_EQ(VerdictOf(index), HttpVerdict::kIndex) << index;
  }
  EXPECT_TRUE(Parse("HEAD /debug/pprof/ HTTP/1.1\r\n\r\n").head_only);
  EXPECT_EQ(VerdictOf("POST /debug/pprof/ HTTP/1.1\r\n\r\n"), HttpVerdict::kMethodNotAllowed);
  HttpRequest allocs = Parse("GET /debug/pprof/allocs?gc=1 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(allocs.verdict, HttpVerdict::kServe);
  EXPECT_TRUE(allocs.allocs);
  EXPECT_FALSE(Parse("GET /debug/pprof/heap HTTP/1.1\r\n\r\n").allocs);
  EXPECT_EQ(VerdictOf("GET /debug/pprof/allocs?seconds=5 HTTP/1.1\r\n\r\n"),
            HttpVerdict::kBadRequest);
  EXPECT_STREQ(HttpStatusText(HttpVerdict::kIndex), "200 OK");
}

TEST(HttpRequestTest, RefusesOtherPathsMethodsAndQueries) {
  EXPECT_EQ(VerdictOf("GET / HTTP/1.1\r\n\r\n"), HttpVerdict::kNotFound);
  EXPECT_EQ(VerdictOf("GET /debug/pprof/heapx HTTP/1.1\r\n\r\n"), HttpVerdict::kNotFound);
  EXPECT_EQ(VerdictOf("GET /debug/pprof/heap/ HTTP/1.1\r\n\r\n"), HttpVerdict::kNotFound);
  EXPECT_EQ(VerdictOf("GET /debug/pprof/profile HTTP/1.1\r\n\r\n"), HttpVerdict::kNotFound);
  HttpRequest post = Parse("POST /debug/pprof/heap HTTP/1.1\r\n\r\n");
  EXPECT_EQ(post.verdict, HttpVerdict::kMethodNotAllowed);
  EXPECT_STREQ(post.allow, "GET, HEAD");
  EXPECT_EQ(VerdictOf("get /debug/pprof/heap HTTP/1.1\r\n\r\n"), HttpVerdict::kMethodNotAllowed);
  HttpRequest delta = Parse("GET /debug/pprof/heap?seconds=30 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(delta.verdict, HttpVerdict::kBadRequest);
  EXPECT_NE(std::string(delta.reason).find("seconds"), std::string::npos) << delta.reason;
  EXPECT_EQ(VerdictOf("GET /debug/pprof/heap?seconds=x HTTP/1.1\r\n\r\n"),
            HttpVerdict::kBadRequest);
  EXPECT_EQ(VerdictOf("GET /debug/pprof/heap?debug=1 HTTP/1.1\r\n\r\n"), HttpVerdict::kBadRequest);
}

// Go's remote symbolizer: a POST's addresses are its body, Content-Length long, starting right
// after the head; a GET's are its query string; a GET without one only asks whether it is there.
TEST(HttpRequestTest, TheSymbolEndpointTakesAddressesInABodyOrAQuery) {
  const std::string head =
      "POST /debug/pprof/symbol HTTP/1.1\r\nHost: x\r\ncontent-length:  11 \r\n\r\n";
  HttpRequest post = Parse(head + "0x1+0x2");
  EXPECT_EQ(post.verdict, HttpVerdict::kSymbols);
  EXPECT_TRUE(post.has_body);
  EXPECT_EQ(post.body_size, 11u);
  EXPECT_EQ(post.head_size, head.size());
  HttpRequest get = Parse("GET /debug/pprof/symbol?0x10+0x20 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(get.verdict, HttpVerdict::kSymbols);
  EXPECT_FALSE(get.has_body);
  EXPECT_EQ(std::string(get.query, get.query_size), "0x10+0x20");
  HttpRequest ask = Parse("GET /debug/pprof/symbol HTTP/1.1\r\n\r\n");
  EXPECT_EQ(ask.verdict, HttpVerdict::kSymbols);
  EXPECT_EQ(ask.query, nullptr);
  EXPECT_TRUE(Parse("HEAD /debug/pprof/symbol HTTP/1.1\r\n\r\n").head_only);
  EXPECT_STREQ(HttpStatusText(HttpVerdict::kSymbols), "200 OK");

  EXPECT_EQ(VerdictOf("PUT /debug/pprof/symbol HTTP/1.1\r\n\r\n"), HttpVerdict::kMethodNotAllowed);
  EXPECT_EQ(VerdictOf("POST /debug/pprof/symbol HTTP/1.1\r\n\r\n"), HttpVerdict::kLengthRequired);
  EXPECT_EQ(VerdictOf("POST /debug/pprof/symbol HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            HttpVerdict::kLengthRequired);
  for (const char* length : {"x", "", "1 2", "-1", "99999999999999999999"}) {
    EXPECT_EQ(VerdictOf(std::string("POST /debug/pprof/symbol HTTP/1.1\r\nContent-Length: ") +
                        length + "\r\n\r\n"),
              HttpVerdict::kBadRequest)
        << length;
  }
  EXPECT_EQ(VerdictOf("POST /debug/pprof/symbol HTTP/1.1\r\nContent-Length: 1\r\n"
                      "Content-Length: 1\r\n\r\n"),
            HttpVerdict::kBadRequest);
  EXPECT_EQ(VerdictOf("POST /debug/pprof/symbol HTTP/1.1\r\nContent-Length: " +
                      std::to_string(kMaxSymbolQueryBytes + 1) + "\r\n\r\n"),
            HttpVerdict::kContentTooLarge);
  EXPECT_STREQ(HttpStatusText(HttpVerdict::kLengthRequired), "411 Length Required");
  EXPECT_STREQ(HttpStatusText(HttpVerdict::kContentTooLarge), "413 Content Too Large");
}

TEST(HttpRequestTest, RefusesMalformedHeads) {
  for (const char* bad : {
           "GET\r\n\r\n", "GET  /debug/pprof/heap HTTP/1.1\r\n\r\n",
           "GET /debug/pprof/heap HTTP/2.0\r\n\r\n", "GET /debug/pprof/heap HTTP/1.1 \r\n\r\n",
           "GET /debug/pprof/heap\r\n\r\n", "G(T /debug/pprof/heap HTTP/1.1\r\n\r\n",
           "GET /debug/pprof/\x01heap HTTP/1.1\r\n\r\n",
           "GET /debug/pprof/heap HTTP/1.1\r\nno colon\r\n\r\n",
           "GET /debug/pprof/heap HTTP/1.1\r\n: empty name\r\n\r\n",
           "GET /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
           "GET /debug/pprof/heap HTTP/1.1\r\nHost: a\x01z\r\n\r\n",
           "\r\n\r\n\r\n\r\n\r\n\r\nGET /debug/pprof/heap HTTP/1.1\r\n\r\n",
           "\x16\x03\x01\x02\x05\x01\xfc\x03\x03\n",  // a TLS ClientHello's start, then a newline
       }) {
    EXPECT_EQ(VerdictOf(bad), HttpVerdict::kBadRequest) << bad;
  }
  // A bad request line is refused before the headers arrive.
  EXPECT_EQ(VerdictOf("garbage\r\nHost: x"), HttpVerdict::kBadRequest);
}

TEST(HttpRequestTest, HeadTooLargeForTheBuffer) {
  std::string head = "GET /debug/pprof/heap HTTP/1.1\r\nCookie: " + std::string(9000, 'a');
  EXPECT_EQ(Parse(head.substr(0, kCapacity)).verdict, HttpVerdict::kHeadTooLarge);
  EXPECT_EQ(Parse(std::string(kCapacity, 'G')).verdict, HttpVerdict::kHeadTooLarge);
  // A head that ends exactly at the buffer's end still fits.
  std::string exact = "GET /debug/pprof/heap HTTP/1.1\r\nX: ";
  exact += std::string(kCapacity - exact.size() - 4, 'b') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), kCapacity);
  EXPECT_EQ(Parse(exact).verdict, HttpVerdict::kServe);
  EXPECT_STREQ(HttpStatusText(HttpVerdict::kHeadTooLarge), "431 Request Header Fields Too Large");
}

std::string Endpoint(const HttpAddress& address) {
  char text[160];
  return FormatHttpEndpoint(address, text, sizeof(text)) ? text : "(does not fit)";
}

TEST(HttpAddressTest, PortsAndHosts) {
  HttpAddress a;
  const char* error = nullptr;
  ASSERT_TRUE(ParseHttpAddress("6060", &a, &error));
  EXPECT_TRUE(a.is_loopback);
  EXPECT_EQ(Endpoint(a), "http://127.0.0.1:6060/debug/pprof/heap");
  ASSERT_TRUE(ParseHttpAddress("localhost:0", &a, &error));
  EXPECT_EQ(Endpoint(a), "http://127.0.0.1:0/debug/pprof/heap");
  ASSERT_TRUE(ParseHttpAddress("127.1.2.3:65535", &a, &error));
  EXPECT_TRUE(a.is_loopback);
  ASSERT_TRUE(ParseHttpAddress("[::1]:8080", &a, &error));
  EXPECT_TRUE(a.is_loopback);
  EXPECT_EQ(Endpoint(a), "http://[::1]:8080/debug/pprof/heap");
  for (const char* open : {"0.0.0.0:6060", "192.168.1.2:80", "[::]:6060", "[fe80::1]:1"}) {
    ASSERT_TRUE(ParseHttpAddress(open, &a, &error)) << open;
    EXPECT_FALSE(a.is_loopback) << open;
  }
}

TEST(HttpAddressTest, UnixSockets) {
  HttpAddress a;
  const char* error = nullptr;
  for (const char* path : {"/tmp/heaprec.sock", "./heap.sock", "unix:relative.sock"}) {
    ASSERT_TRUE(ParseHttpAddress(path, &a, &error)) << path;
    EXPECT_TRUE(a.is_unix);
    EXPECT_TRUE(a.is_loopback);
  }
  EXPECT_EQ(Endpoint(a), "unix:relative.sock");
  EXPECT_FALSE(ParseHttpAddress(("/" + std::string(120, 's')).c_str(), &a, &error));
  EXPECT_NE(std::string(error).find("too long"), std::string::npos);
  EXPECT_FALSE(ParseHttpAddress("unix:", &a, &error));
}

TEST(HttpAddressTest, BadSyntax) {
  HttpAddress a;
  const char* error = nullptr;
  for (const char* bad :
       {"", "x", "65536", "-1", "6060 ", "host:6060", ":6060", "1.2.3:80", "::1:80", "[::1]",
        "[::1:80", "[1.2.3.4]:80", "localhost", "127.0.0.1:", "127.0.0.1:99999999999", "[]:80"}) {
    error = nullptr;
    EXPECT_FALSE(ParseHttpAddress(bad, &a, &error)) << bad;
    EXPECT_NE(error, nullptr) << bad;
  }
}

}  // namespace
}  // namespace heaprec::preload
