#include "preload/http/request.h"

#include <string.h>
#include <strings.h>

#include <cstdint>

namespace heaprec::preload {
namespace {

constexpr char kProfilePath[] = "/debug/pprof/heap";
constexpr char kAllocsPath[] = "/debug/pprof/allocs";
constexpr char kSymbolPath[] = "/debug/pprof/symbol";
constexpr char kIndexPath[] = "/debug/pprof/";

struct Text {
  const char* data;
  std::size_t size;
  bool Is(const char* literal) const {
    return size == strlen(literal) && memcmp(data, literal, size) == 0;
  }
};

HttpRequest Verdict(HttpVerdict verdict, const char* reason, bool head_only = false) {
  HttpRequest request;
  request.verdict = verdict;
  request.reason = reason;
  request.head_only = head_only;
  return request;
}

HttpRequest NotAllowed(const char* reason, const char* allow) {
  HttpRequest request = Verdict(HttpVerdict::kMethodNotAllowed, reason);
  request.allow = allow;
  return request;
}

// RFC 9110 tchar: the characters of a method or a header name.
bool IsTokenChar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// The line starting at `start`, without its LF and an optional CR before it. False when no LF
// comes before `end`.
bool NextLine(const char* start, const char* end, Text* line, const char** next) {
  const void* newline = memchr(start, '\n', static_cast<std::size_t>(end - start));
  if (newline == nullptr) return false;
  const char* stop = static_cast<const char*>(newline);
  *next = stop + 1;
  if (stop > start && stop[-1] == '\r') --stop;
  *line = {start, static_cast<std::size_t>(stop - start)};
  return true;
}

struct RequestLine {
  Text method, target;
};

// METHOD SP TARGET SP HTTP/1.x, nothing more.
bool ParseRequestLine(Text line, RequestLine* out) {
  std::size_t i = 0;
  while (i < line.size && IsTokenChar(static_cast<unsigned char>(line.data[i]))) ++i;
  if (i == 0 || i == line.size || line.data[i] != ' ') return false;
  out->method = {line.data, i};
  std::size_t target_start = ++i;
  while (i < line.size && line.data[i] > ' ' && line.data[i] < 0x7f) ++i;
  if (i == target_start || i == line.size || line.data[i] != ' ') return false;
  out->target = {line.data + target_start, i - target_start};
  Text version = {line.data + i + 1, line.size - i - 1};
  return version.Is("HTTP/1.1") || version.Is("HTTP/1.0");
}

// What the headers say about a body: only /debug/pprof/symbol's POST has one.
struct BodyHeaders {
  bool has_length = false;
  bool valid_length = true;  // one Content-Length, all digits, not absurd
  std::uint64_t length = 0;
  bool has_transfer_encoding = false;  // chunked: not read (Go's clients send a length)
};

// VALUE without the optional white space around it.
Text Trimmed(Text value) {
  while (value.size > 0 && (value.data[0] == ' ' || value.data[0] == '\t')) {
    ++value.data;
    --value.size;
  }
  while (value.size > 0 &&
         (value.data[value.size - 1] == ' ' || value.data[value.size - 1] == '\t')) {
    --value.size;
  }
  return value;
}

void NoteBodyHeader(Text name, Text value, BodyHeaders* body) {
  if (name.size == 17 && strncasecmp(name.data, "Transfer-Encoding", 17) == 0) {
    body->has_transfer_encoding = true;
  }
  if (name.size != 14 || strncasecmp(name.data, "Content-Length", 14) != 0) return;
  value = Trimmed(value);
  std::uint64_t length = 0;
  bool valid = !body->has_length && value.size > 0 && value.size <= 15;
  for (std::size_t i = 0; valid && i < value.size; ++i) {
    valid = value.data[i] >= '0' && value.data[i] <= '9';
    length = length * 10 + static_cast<std::uint64_t>(value.data[i] - '0');
  }
  body->has_length = true;
  body->valid_length = body->valid_length && valid;
  body->length = length;
}

// NAME: VALUE, NAME a token, VALUE without control characters but tab. A line starting with white
// space (obsolete line folding) is refused, as RFC 9112 allows.
bool IsValidHeader(Text line, BodyHeaders* body) {
  std::size_t i = 0;
  while (i < line.size && IsTokenChar(static_cast<unsigned char>(line.data[i]))) ++i;
  if (i == 0 || i == line.size || line.data[i] != ':') return false;
  const std::size_t colon = i;
  for (++i; i < line.size; ++i) {
    auto c = static_cast<unsigned char>(line.data[i]);
    if ((c < ' ' && c != '\t') || c == 0x7f) return false;
  }
  NoteBodyHeader({line.data, colon}, {line.data + colon + 1, line.size - colon - 1}, body);
  return true;
}

// Whether `value` is all digits (empty counts as 0) and more than zero.
bool IsPositiveNumber(Text value, bool* valid) {
  bool positive = false;
  *valid = true;
  for (std::size_t i = 0; i < value.size; ++i) {
    if (value.data[i] < '0' || value.data[i] > '9') *valid = false;
    if (value.data[i] != '0') positive = true;
  }
  return positive;
}

// The query string's parameters that change what Go would serve: refused rather than ignored.
HttpRequest CheckQuery(Text query, bool head_only) {
  const char* p = query.data;
  const char* end = query.data + query.size;
  while (p < end) {
    const char* amp = static_cast<const char*>(memchr(p, '&', static_cast<std::size_t>(end - p)));
    const char* stop = amp != nullptr ? amp : end;
    const char* equals =
        static_cast<const char*>(memchr(p, '=', static_cast<std::size_t>(stop - p)));
    Text key = {p, static_cast<std::size_t>((equals != nullptr ? equals : stop) - p)};
    Text value = {equals != nullptr ? equals + 1 : stop,
                  static_cast<std::size_t>(stop - (equals != nullptr ? equals + 1 : stop))};
    bool valid = true;
    if (key.Is("seconds") && (IsPositiveNumber(value, &valid) || !valid)) {
      return Verdict(HttpVerdict::kBadRequest,
                     valid ? "heaprec serves no delta profiles (seconds=N): fetch "
                             "/debug/pprof/heap twice and compare them with heaprec diff"
                           : "seconds must be a number");
    }
    if (key.Is("debug") && (IsPositiveNumber(value, &valid) || !valid)) {
      return Verdict(HttpVerdict::kBadRequest,
                     "heaprec serves the profile in pprof format only (debug=0)");
    }
    p = stop + 1;
  }
  return Verdict(HttpVerdict::kServe, "", head_only);
}

// /debug/pprof/symbol: GET (its query string the addresses, if any) or POST (its body).
HttpRequest RouteSymbols(const RequestLine& request, const char* question, Text target,
                         const BodyHeaders& body, bool head_only, bool get) {
  if (get) {
    HttpRequest symbols = Verdict(HttpVerdict::kSymbols, "", head_only);
    if (question != nullptr && question + 1 < target.data + target.size) {
      symbols.query = question + 1;
      symbols.query_size = static_cast<std::size_t>(target.data + target.size - question - 1);
    }
    return symbols;
  }
  if (!request.method.Is("POST")) {
    return NotAllowed("method not allowed: use GET, HEAD or POST", "GET, HEAD, POST");
  }
  if (body.has_transfer_encoding || !body.has_length) {
    return Verdict(HttpVerdict::kLengthRequired, "POST the addresses with a Content-Length");
  }
  if (!body.valid_length) return Verdict(HttpVerdict::kBadRequest, "malformed Content-Length");
  if (body.length > kMaxSymbolQueryBytes) {
    return Verdict(HttpVerdict::kContentTooLarge, "at most 16 MiB of addresses per request");
  }
  HttpRequest symbols = Verdict(HttpVerdict::kSymbols, "");
  symbols.has_body = true;
  symbols.body_size = body.length;
  return symbols;
}

HttpRequest Route(const RequestLine& request, const BodyHeaders& body) {
  Text target = request.target;
  // Absolute form (what a client talking to a proxy sends): the path starts after the authority.
  if (target.size >= 7 && strncasecmp(target.data, "http://", 7) == 0) {
    const char* slash = static_cast<const char*>(memchr(target.data + 7, '/', target.size - 7));
    target = slash != nullptr
                 ? Text{slash, target.size - static_cast<std::size_t>(slash - target.data)}
                 : Text{"/", 1};
  }
  const char* question = static_cast<const char*>(memchr(target.data, '?', target.size));
  Text path = {target.data, question != nullptr ? static_cast<std::size_t>(question - target.data)
                                                : target.size};
  bool head_only = request.method.Is("HEAD");
  bool get = head_only || request.method.Is("GET");
  if (path.Is(kSymbolPath)) return RouteSymbols(request, question, target, body, head_only, get);
  // Go's index answers with and without the final slash (its mux redirects the latter).
  const bool index = path.Is(kIndexPath) || path.Is("/debug/pprof");
  const bool allocs = path.Is(kAllocsPath);
  if (!index && !allocs && !path.Is(kProfilePath)) {
    return Verdict(HttpVerdict::kNotFound,
                   "not found: heaprec serves /debug/pprof/heap, /debug/pprof/allocs, "
                   "/debug/pprof/symbol and the index /debug/pprof/");
  }
  if (!get) return NotAllowed("method not allowed: use GET or HEAD", "GET, HEAD");
  if (index) return Verdict(HttpVerdict::kIndex, "", head_only);
  HttpRequest served = question == nullptr
                           ? Verdict(HttpVerdict::kServe, "", head_only)
                           : CheckQuery({question + 1, target.size - path.size - 1}, head_only);
  served.allocs = allocs && served.verdict == HttpVerdict::kServe;
  return served;
}

}  // namespace

HttpRequest ParseHttpRequest(const char* data, std::size_t size, std::size_t capacity) {
  const char* end = data + size;
  const char* p = data;
  Text line;
  const char* next = nullptr;
  HttpRequest incomplete = size >= capacity
                               ? Verdict(HttpVerdict::kHeadTooLarge, "request head too large")
                               : HttpRequest();
  // RFC 9112 2.2: empty lines before the request line are ignored (a few, not forever).
  for (int skipped = 0;; ++skipped) {
    if (!NextLine(p, end, &line, &next)) return incomplete;
    p = next;
    if (line.size != 0) break;
    if (skipped == 4) return Verdict(HttpVerdict::kBadRequest, "malformed request line");
  }
  RequestLine request;
  if (!ParseRequestLine(line, &request)) {
    return Verdict(HttpVerdict::kBadRequest, "malformed request line");
  }
  BodyHeaders body;
  for (;;) {
    if (!NextLine(p, end, &line, &next)) return incomplete;
    p = next;
    if (line.size == 0) break;  // the end of the head
    if (!IsValidHeader(line, &body)) {
      return Verdict(HttpVerdict::kBadRequest, "malformed header line");
    }
  }
  HttpRequest routed = Route(request, body);
  routed.head_size = static_cast<std::size_t>(p - data);
  return routed;
}

const char* HttpStatusText(HttpVerdict verdict) {
  switch (verdict) {
    case HttpVerdict::kServe:
    case HttpVerdict::kSymbols:
    case HttpVerdict::kIndex:
      return "200 OK";
    case HttpVerdict::kBadRequest:
      return "400 Bad Request";
    case HttpVerdict::kNotFound:
      return "404 Not Found";
    case HttpVerdict::kMethodNotAllowed:
      return "405 Method Not Allowed";
    case HttpVerdict::kLengthRequired:
      return "411 Length Required";
    case HttpVerdict::kContentTooLarge:
      return "413 Content Too Large";
    case HttpVerdict::kHeadTooLarge:
      return "431 Request Header Fields Too Large";
    case HttpVerdict::kUnavailable:
      return "503 Service Unavailable";
    case HttpVerdict::kIncomplete:
      break;
  }
  return "500 Internal Server Error";
}

}  // namespace heaprec::preload
