#include "cli/page_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace heaprec::cli {
namespace {

std::atomic<bool> g_stop{false};

void RequestStop(int) { g_stop.store(true); }

// Closes a descriptor when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) close(fd);
  }
};

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads the request's head (up to its blank line, at most 16 KiB, 5 s) and answers it.
void Answer(int client, const std::string& page) {
  const timeval timeout = {5, 0};
  setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 16384) {
    const ssize_t n = recv(client, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR && !g_stop.load()) continue;
    if (n <= 0) return;
    head.append(buffer, static_cast<size_t>(n));
  }
  const std::string line = head.substr(0, head.find("\r\n"));
  const bool get = line.rfind("GET ", 0) == 0, head_only = line.rfind("HEAD ", 0) == 0;
  const size_t path_at = line.find(' ') + 1;
  const std::string path = line.substr(path_at, line.find(' ', path_at) - path_at);
  std::string status = "200 OK", type = "text/html; charset=utf-8";
  const std::string* body = &page;
  static const std::string not_found = "not found: heaprec ui serves its page at /\n";
  static const std::string not_allowed = "use GET\n";
  if (!get && !head_only) {
    status = "405 Method Not Allowed";
    type = "text/plain";
    body = &not_allowed;
  } else if (path != "/" && path != "/index.html") {
    status = "404 Not Found";
    type = "text/plain";
    body = &not_found;
  }
  const std::string header = "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
                             "\r\nContent-Length: " + std::to_string(body->size()) +
                             "\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
  if (WriteAll(client, header.data(), header.size()) && !head_only) {
    WriteAll(client, body->data(), body->size());
  }
}

}  // namespace

void ServePage(const std::string& page, uint16_t port,
               const std::function<void(const std::string& url)>& ready) {
  Descriptor server{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (server.fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int on = 1;
  setsockopt(server.fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (bind(server.fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(server.fd, 16) != 0) {
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                             std::strerror(errno));
  }
  socklen_t length = sizeof(address);
  getsockname(server.fd, reinterpret_cast<sockaddr*>(&address), &length);
  // SIGINT and SIGTERM end the loop (no SA_RESTART: poll returns); the old handlers come back.
  struct sigaction stop {
  }, old_int{}, old_term{};
  stop.sa_handler = RequestStop;
  sigemptyset(&stop.sa_mask);
  g_stop.store(false);
  sigaction(SIGINT, &stop, &old_int);
  sigaction(SIGTERM, &stop, &old_term);
  ready("http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/");
  while (!g_stop.load()) {
    pollfd waiting = {server.fd, POLLIN, 0};
    if (poll(&waiting, 1, 500) <= 0) continue;
    Descriptor client{accept4(server.fd, nullptr, nullptr, SOCK_CLOEXEC)};
    if (client.fd >= 0) Answer(client.fd, page);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

}  // namespace heaprec::cli
