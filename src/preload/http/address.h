// HEAPREC_HTTP / `heaprec run --http`: where the profiled process serves /debug/pprof/heap.
//
//   PORT                 127.0.0.1:PORT
//   HOST:PORT            HOST an IPv4 literal, [IPv6 literal] or localhost (127.0.0.1)
//   /PATH, ./PATH        a Unix socket at PATH
//   unix:PATH            the same, for any path
//
// PORT 0 asks the kernel for a free port. The parser is the same for the library (at start-up, no
// malloc: inet_pton and fixed buffers only) and for the CLI, which checks the syntax before it
// starts the program. Whether the address can be bound is known only by trying (server.cc).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstdint>

namespace heaprec::preload {

struct HttpAddress {
  union {
    sockaddr any;
    sockaddr_in ipv4;
    sockaddr_in6 ipv6;
    sockaddr_un unix_socket;
  } socket = {};
  socklen_t length = 0;
  bool is_unix = false;
  // 127.0.0.0/8, ::1, and every Unix socket (its file's permissions say who may connect).
  bool is_loopback = false;
};

// Parses `text`. On failure returns false and sets *error to a short reason ("port out of range").
bool ParseHttpAddress(const char* text, HttpAddress* address, const char** error);

// "http://127.0.0.1:41234/debug/pprof/heap" (or "unix:PATH" for a socket) into `out`. False when
// it does not fit.
bool FormatHttpEndpoint(const HttpAddress& address, char* out, std::size_t capacity);

}  // namespace heaprec::preload
