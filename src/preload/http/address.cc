#include "preload/http/address.h"

#include <arpa/inet.h>
#include <string.h>

#include "core/appender.h"

namespace heaprec::preload {
namespace {

constexpr char kSyntax[] =
    "expected PORT, HOST:PORT (HOST an IPv4 address, [IPv6 address] or localhost) or a Unix "
    "socket path (/PATH, ./PATH or unix:PATH)";

// A decimal port, 0 to 65535, and nothing after it.
bool ParsePort(const char* text, std::uint16_t* port, const char** error) {
  if (*text == '\0') {
    *error = kSyntax;
    return false;
  }
  std::uint32_t value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') {
      *error = kSyntax;
      return false;
    }
    value = value * 10 + static_cast<std::uint32_t>(*p - '0');
    if (value > 65535) {
      *error = "port out of range (0 to 65535)";
      return false;
    }
  }
  *port = static_cast<std::uint16_t>(value);
  return true;
}

bool ParseUnixPath(const char* path, HttpAddress* address, const char** error) {
  std::size_t length = strlen(path);
  if (length == 0) {
    *error = kSyntax;
    return false;
  }
  if (length >= sizeof(address->socket.unix_socket.sun_path)) {
    *error = "socket path too long (at most 107 bytes)";
    return false;
  }
  address->socket.unix_socket.sun_family = AF_UNIX;
  memcpy(address->socket.unix_socket.sun_path, path, length + 1);
  address->length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length + 1);
  address->is_unix = true;
  address->is_loopback = true;
  return true;
}

// HOST (without brackets) of HOST:PORT into `address`, port already parsed.
bool ParseHost(const char* host, std::size_t host_length, bool bracketed, std::uint16_t port,
               HttpAddress* address, const char** error) {
  char text[INET6_ADDRSTRLEN + 1];
  if (host_length == 0 || host_length >= sizeof(text)) {
    *error = kSyntax;
    return false;
  }
  memcpy(text, host, host_length);
  text[host_length] = '\0';
  if (bracketed) {
    sockaddr_in6& v6 = address->socket.ipv6;
    if (inet_pton(AF_INET6, text, &v6.sin6_addr) != 1) {
      *error = "not an IPv6 address between the brackets";
      return false;
    }
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    address->length = sizeof(v6);
    address->is_loopback = IN6_IS_ADDR_LOOPBACK(&v6.sin6_addr);
    return true;
  }
  sockaddr_in& v4 = address->socket.ipv4;
  if (strcmp(text, "localhost") == 0) {
    v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else if (inet_pton(AF_INET, text, &v4.sin_addr) != 1) {
    *error = "the host must be an IPv4 address, [IPv6 address] or localhost (no name lookup)";
    return false;
  }
  v4.sin_family = AF_INET;
  v4.sin_port = htons(port);
  address->length = sizeof(v4);
  address->is_loopback = (ntohl(v4.sin_addr.s_addr) >> 24) == 127;
  return true;
}

}  // namespace

bool ParseHttpAddress(const char* text, HttpAddress* address, const char** error) {
  *address = HttpAddress();
  if (strncmp(text, "unix:", 5) == 0) return ParseUnixPath(text + 5, address, error);
  if (text[0] == '/' || strncmp(text, "./", 2) == 0) return ParseUnixPath(text, address, error);
  const char* colon = strrchr(text, ':');
  std::uint16_t port = 0;
  if (colon == nullptr) {  // PORT alone: loopback
    if (!ParsePort(text, &port, error)) return false;
    return ParseHost("127.0.0.1", 9, false, port, address, error);
  }
  if (!ParsePort(colon + 1, &port, error)) return false;
  std::size_t host_length = static_cast<std::size_t>(colon - text);
  if (text[0] == '[') {
    if (host_length < 2 || text[host_length - 1] != ']') {
      *error = kSyntax;
      return false;
    }
    return ParseHost(text + 1, host_length - 2, true, port, address, error);
  }
  if (memchr(text, ':', host_length) != nullptr) {
    *error = "an IPv6 address goes between brackets: [::1]:PORT";
    return false;
  }
  return ParseHost(text, host_length, false, port, address, error);
}

bool FormatHttpEndpoint(const HttpAddress& address, char* out, std::size_t capacity) {
  Appender a(out, capacity);
  if (address.is_unix) {
    a.Add("unix:");
    a.Add(address.socket.unix_socket.sun_path);
    return a.Finish();
  }
  char host[INET6_ADDRSTRLEN];
  std::uint16_t port = 0;
  a.Add("http://");
  if (address.socket.any.sa_family == AF_INET6) {
    if (inet_ntop(AF_INET6, &address.socket.ipv6.sin6_addr, host, sizeof(host)) == nullptr) {
      return false;
    }
    a.Add("[");
    a.Add(host);
    a.Add("]");
    port = ntohs(address.socket.ipv6.sin6_port);
  } else {
    if (inet_ntop(AF_INET, &address.socket.ipv4.sin_addr, host, sizeof(host)) == nullptr) {
      return false;
    }
    a.Add(host);
    port = ntohs(address.socket.ipv4.sin_port);
  }
  a.Add(":");
  a.AddUnsigned(port, 1);
  a.Add("/debug/pprof/heap");
  return a.Finish();
}

}  // namespace heaprec::preload
