// The request head of the profiled process's HTTP endpoint (server.cc), parsed as a pure
// function of the bytes received so far: no allocation, no state, no I/O, so that it can be unit
// tested and fuzzed (fuzz/http_request_fuzzer.cc) apart from the sockets.
//
// Served: GET or HEAD of /debug/pprof/heap (also in absolute form, http://host/debug/pprof/heap),
// HTTP/1.0 or 1.1, with any query string: `gc` and `debug=0` are accepted and ignored, as Go's
// net/http/pprof ignores what heaprec has no use for; `seconds=N` (N > 0, Go's delta profile) and
// `debug=N` (N > 0, Go's text format) are answered 400 with a one-line reason.
//
// /debug/pprof/symbol, Go's remote symbolizer, answers that it knows no symbols (GET:
// "num_symbols: 0"; POST: no lines): `go tool pprof` asks it for every mapping its local
// symbolization left without names (a stripped libc), and a 404 there stops pprof altogether.
//
// Any other path is 404, any other method 405, anything malformed 400, and a head that does not fit
// in the caller's buffer 431.
#pragma once

#include <cstddef>

namespace heaprec::preload {

enum class HttpVerdict {
  kIncomplete,        // no complete head yet, nothing wrong so far: read more
  kServe,             // 200: the profile
  kNoSymbols,         // 200: /debug/pprof/symbol, `reason` the body's one line ("" for none)
  kBadRequest,        // 400
  kNotFound,          // 404
  kMethodNotAllowed,  // 405
  kHeadTooLarge,      // 431
  kUnavailable,       // 503: never from the parser; the server's, when no profile can be taken
};

struct HttpRequest {
  HttpVerdict verdict = HttpVerdict::kIncomplete;
  bool head_only = false;   // HEAD: the response without its body
  const char* reason = "";  // the body's one line, without newline: an error's, or kNoSymbols'
  const char* allow = "";   // kMethodNotAllowed: the methods the path takes ("GET, HEAD")
};

// Parses the first `size` bytes received on a connection; `capacity` is the most the caller will
// ever hold (a head that does not end within it is kHeadTooLarge). Decides as soon as it can: a
// malformed request line is kBadRequest before its headers arrive.
HttpRequest ParseHttpRequest(const char* data, std::size_t size, std::size_t capacity);

// The status line's text for a verdict other than kIncomplete: "404 Not Found".
const char* HttpStatusText(HttpVerdict verdict);

}  // namespace heaprec::preload
