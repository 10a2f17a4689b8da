// Fuzzes the profiled process's HTTP endpoint input: the request-head parser (ParseHttpRequest,
// src/preload/http/request.cc), which reads whatever any local client sends, and HEAPREC_HTTP's
// address parser (ParseHttpAddress, src/preload/http/address.cc).
//
// The input is a request head, copied into an exactly sized heap block (ASan sees one byte read
// too many). The last byte picks the buffer capacity the server would have (8 KiB, or the input's
// size, or less). Checks: a verdict is always one of the seven; an error has a non-empty reason on
// one line, and a 405 (only) the methods to allow; a head as long as the capacity is never
// kIncomplete; and the verdict is consistent the way the server reads: once a prefix of the input
// decides, every longer prefix decides the same (the server stops reading at the first decision;
// prefixes are tried at every line end). The whole input, as a string, also goes to
// ParseHttpAddress, whose accepted addresses must format into a bounded endpoint string.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "preload/http/address.h"
#include "preload/http/request.h"

namespace {

using heaprec::preload::HttpRequest;
using heaprec::preload::HttpVerdict;

[[noreturn]] void Bug(const char* what) {
  std::fprintf(stderr, "http_request_fuzzer: BUG: %s\n", what);
  std::abort();
}

HttpRequest ParseExactly(const std::uint8_t* data, std::size_t size, std::size_t capacity) {
  std::unique_ptr<char[]> copy(new char[size == 0 ? 1 : size]);
  if (size != 0) std::memcpy(copy.get(), data, size);
  return heaprec::preload::ParseHttpRequest(copy.get(), size, capacity);
}

void CheckVerdict(const HttpRequest& r) {
  switch (r.verdict) {
    case HttpVerdict::kIncomplete:
    case HttpVerdict::kServe:
    case HttpVerdict::kIndex:
      return;
    case HttpVerdict::kSymbols:
      if (r.query != nullptr && r.query_size == 0) Bug("an empty query string given as one");
      if (r.has_body && r.body_size > heaprec::preload::kMaxSymbolQueryBytes) Bug("body size");
      if (r.head_size == 0) Bug("a request without a head");
      return;
    case HttpVerdict::kBadRequest:
    case HttpVerdict::kNotFound:
    case HttpVerdict::kMethodNotAllowed:
    case HttpVerdict::kLengthRequired:
    case HttpVerdict::kContentTooLarge:
    case HttpVerdict::kHeadTooLarge:
    case HttpVerdict::kUnavailable:
      if (r.verdict == HttpVerdict::kUnavailable) Bug("the parser never answers 503");
      if (r.reason == nullptr || r.reason[0] == '\0' || std::strchr(r.reason, '\n') != nullptr) {
        Bug("an error without a one-line reason");
      }
      if ((r.verdict == HttpVerdict::kMethodNotAllowed) !=
          (r.allow != nullptr && r.allow[0] != 0)) {
        Bug("Allow goes with 405 and only with it");
      }
      return;
  }
  Bug("verdict out of range");
}

void FuzzAddress(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  text.resize(std::strlen(text.c_str()));  // up to the first NUL, as getenv would give it
  heaprec::preload::HttpAddress address;
  const char* error = nullptr;
  if (!heaprec::preload::ParseHttpAddress(text.c_str(), &address, &error)) {
    if (error == nullptr || error[0] == '\0') Bug("a refused address without a reason");
    return;
  }
  if (address.length == 0 || address.length > sizeof(address.socket)) Bug("address length");
  char endpoint[160];
  if (!heaprec::preload::FormatHttpEndpoint(address, endpoint, sizeof(endpoint))) {
    Bug("an accepted address does not format");
  }
  if (std::strlen(endpoint) >= sizeof(endpoint)) Bug("endpoint overflow");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzAddress(data, size);
  if (size == 0) return 0;
  std::size_t head = size - 1;
  std::size_t capacity;
  switch (data[head] % 3) {
    case 0:
      capacity = 8192;
      break;
    case 1:
      capacity = head;
      break;
    default:
      capacity = head / 2 + 1;
      break;
  }
  if (head > capacity) head = capacity;  // the server never holds more than its buffer
  HttpRequest full = ParseExactly(data, head, capacity);
  CheckVerdict(full);
  if (head >= capacity && full.verdict == HttpVerdict::kIncomplete) Bug("a full buffer undecided");
  // The first prefix that decides must agree with every longer one. A decision can only come with
  // a line's end (or a full buffer, which is `head` itself): the prefixes that end just after a
  // newline are the ones to try, which keeps this linear in the number of lines.
  for (std::size_t n = 0; n <= head; ++n) {
    if (n != head && (n == 0 || data[n - 1] != '\n')) continue;
    HttpRequest prefix = ParseExactly(data, n, capacity);
    CheckVerdict(prefix);
    if (prefix.verdict == HttpVerdict::kIncomplete) continue;
    if (prefix.verdict != full.verdict || prefix.head_only != full.head_only) {
      Bug("a longer head changed the verdict");
    }
    break;
  }
  return 0;
}
