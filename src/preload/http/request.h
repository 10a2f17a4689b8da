// The request head of the profiled process's HTTP endpoint (server.cc), parsed as a pure
// function of the bytes received so far: no allocation, no state, no I/O, so that it can be unit
// tested and fuzzed (fuzz/http_request_fuzzer.cc) apart from the sockets.
//
// Served: GET or HEAD of /debug/pprof/heap (also in absolute form, http://host/debug/pprof/heap),
// and of /debug/pprof/allocs, the same profile whose default sample type is alloc_space (as Go
// serves it: `go tool pprof URL/allocs` opens on the bytes allocated since start);
// HTTP/1.0 or 1.1, with any query string: `gc` and `debug=0` are accepted and ignored, as Go's
// net/http/pprof ignores what heaprec has no use for; `seconds=N` (N > 0, Go's delta profile) and
// `debug=N` (N > 0, Go's text format) are answered 400 with a one-line reason.
//
// /debug/pprof/symbol is Go's remote symbolizer (net/http/pprof's Symbol handler): kSymbols, with
// the addresses to look up ("0xADDR+0xADDR...") in the POST body (its length from Content-Length,
// at most kMaxSymbolQueryBytes) or in a GET's query string; a GET without a query only asks whether
// symbols are served. `go tool pprof` posts the addresses of every mapping its local symbolization
// left without names (server.cc answers them: symbol_server.h).
//
// /debug/pprof/ (and /debug/pprof) is kIndex, a page listing these endpoints, as Go's index is.
//
// Any other path is 404, any other method 405, anything malformed 400, and a head that does not fit
// in the caller's buffer 431.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

enum class HttpVerdict {
  kIncomplete,        // no complete head yet, nothing wrong so far: read more
  kServe,             // 200: the profile
  kSymbols,           // 200: /debug/pprof/symbol, the addresses in `query` or the body
  kIndex,             // 200: /debug/pprof/, the page listing the endpoints
  kBadRequest,        // 400
  kNotFound,          // 404
  kMethodNotAllowed,  // 405
  kLengthRequired,    // 411: a POST whose body has no Content-Length (or is chunked)
  kContentTooLarge,   // 413: a body of more than kMaxSymbolQueryBytes
  kHeadTooLarge,      // 431
  kUnavailable,       // 503: never from the parser; the server's, when no profile can be taken
};

struct HttpRequest {
  HttpVerdict verdict = HttpVerdict::kIncomplete;
  bool head_only = false;   // HEAD: the response without its body
  bool allocs = false;      // kServe of /debug/pprof/allocs: default sample type alloc_space
  const char* reason = "";  // an error's body, one line without newline
  const char* allow = "";   // kMethodNotAllowed: the methods the path takes ("GET, HEAD")
  // kSymbols: the GET query string (within the parsed bytes; null for none), or the POST body's
  // length, which starts `head_size` bytes into what was parsed.
  const char* query = nullptr;
  std::size_t query_size = 0;
  bool has_body = false;
  std::uint64_t body_size = 0;
  std::size_t head_size = 0;  // the request head's bytes, its blank line included
};

// The largest body of addresses /debug/pprof/symbol reads: 16 MiB, a million addresses and more.
inline constexpr std::uint64_t kMaxSymbolQueryBytes = 16u << 20;

// Parses the first `size` bytes received on a connection; `capacity` is the most the caller will
// ever hold (a head that does not end within it is kHeadTooLarge). Decides as soon as it can: a
// malformed request line is kBadRequest before its headers arrive.
HttpRequest ParseHttpRequest(const char* data, std::size_t size, std::size_t capacity);

// The status line's text for a verdict other than kIncomplete: "404 Not Found".
const char* HttpStatusText(HttpVerdict verdict);

}  // namespace heaprec::preload
