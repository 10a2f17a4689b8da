#include "preload/http/server.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "core/appender.h"
#include "core/byte_sink.h"
#include "core/own_descriptors.h"
#include "preload/attach/injected.h"
#include "preload/control/settings.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/http/address.h"
#include "preload/http/request.h"
#include "preload/http/symbol_server.h"
#include "preload/messages.h"
#include "preload/process/environment.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "schema/profile_schema.h"

namespace heaprec::preload {
namespace {

constexpr char kVariable[] = "HEAPREC_HTTP";
constexpr char kPublicVariable[] = "HEAPREC_HTTP_PUBLIC";
constexpr std::size_t kHeadBytes = 8 * 1024;              // the request head's buffer
constexpr std::uint64_t kHeadDeadlineNs = 5000000000ull;  // to receive the whole head
constexpr std::uint64_t kStallNs = 10000000000ull;  // a client that reads nothing for this long
constexpr std::uint64_t kResponseDeadlineNs = 300000000000ull;  // a whole response, at most
constexpr std::uint64_t kDrainNs = 1000000000ull;  // reading what is left before closing

std::atomic<int> g_listener{-1};
std::atomic<int> g_connection{-1};
// Which server is current: StopHttpServer (a detach) and each start make a new one. The serve
// thread of an older one ends and closes its own listening socket, which it alone holds then.
std::atomic<unsigned> g_generation{0};
// The listening socket of the current server and of the one before it (whose thread may not have
// closed it yet): what each thread needs to recognize its socket, and what a fork child closes.
struct Listening {
  int fd = -1;
  ino_t inode = 0;
};
Listening g_listenings[2];
unsigned g_starts = 0;  // the servers started: they take the two slots in turn
int g_owner_pid = 0;    // the process that read HEAPREC_HTTP (0: not set); constant after start-up
bool g_public = false;
// "HEAPREC_HTTP=ADDR", for exec from the serving process (server.h).
char g_variable[PATH_MAX + sizeof(kVariable) + 1];
HttpAddress g_address;
ino_t g_socket_inode = 0;  // of the Unix socket's file, removed at exit only if still ours

// Whether descriptor `fd` is still the listening socket: a program that closed descriptors it did
// not know (closefrom) may have reused the number for a socket of its own, whose connections are
// not heaprec's to accept.
bool IsOurListener(const Listening& listening) {
  struct stat st;
  return fstat(listening.fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == listening.inode;
}

// "heaprec: HEAPREC_HTTP=ADDR: REASON", REASON's first letter in lower case (strerror's start with
// a capital).
void Complain(const char* reason, const char* more = "") {
  char lowered[128];
  Appender text(lowered, sizeof(lowered));
  text.Add(reason);
  if (!text.Finish()) lowered[0] = '\0';
  if (lowered[0] >= 'A' && lowered[0] <= 'Z' && lowered[1] >= 'a' && lowered[1] <= 'z') {
    lowered[0] = static_cast<char>(lowered[0] - 'A' + 'a');
  }
  const char* parts[] = {"heaprec: ", g_variable,
                         ": ",        lowered[0] != '\0' ? lowered : reason,
                         more,        "; serving no profiles over HTTP\n"};
  WriteStderr(parts, sizeof(parts) / sizeof(parts[0]));
}

int Fail(int fd, const char* reason) {
  Complain(reason);
  if (fd >= 0) close(fd);
  return -1;
}

// A file at the socket's path: replaced when it is a socket nobody listens on (left by a process
// that died), kept otherwise. False after one line on stderr.
bool ClearStaleSocket(const char* path) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    if (errno == ENOENT) return true;
    Complain(strerrordesc_np(errno));
    return false;
  }
  if (!S_ISSOCK(st.st_mode)) {
    Complain("a file that is not a socket is in the way");
    return false;
  }
  int probe = MakeOwn([] { return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); });
  int error = probe < 0 || connect(probe, &g_address.socket.any, g_address.length) == 0
                  ? (probe < 0 ? errno : EADDRINUSE)
                  : errno;
  if (probe >= 0) close(probe);
  if (error != ECONNREFUSED) {
    Complain(strerrordesc_np(error));
    return false;
  }
  unlink(path);
  return true;
}

// Binds and listens; -1 after one line on stderr.
int Listen() {
  const char* path = g_address.socket.unix_socket.sun_path;
  if (g_address.is_unix && !ClearStaleSocket(path)) return -1;
  int fd =
      MakeOwn([] { return socket(g_address.socket.any.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0); });
  if (fd < 0) return Fail(-1, strerrordesc_np(errno));
  if (g_address.is_unix) {
    // bind() creates the file with the socket's own mode, less the umask: 0600 from the start,
    // without a moment where another user could connect.
    fchmod(fd, 0600);
  } else {
    int on = 1;  // rebinding at once after a restart, as Go's listeners do
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  }
  if (bind(fd, &g_address.socket.any, g_address.length) != 0) {
    return Fail(fd, strerrordesc_np(errno));
  }
  if (g_address.is_unix) {
    struct stat st;
    if (stat(path, &st) == 0) g_socket_inode = st.st_ino;
  }
  if (listen(fd, 16) != 0) return Fail(fd, strerrordesc_np(errno));
  return fd;
}

bool IsEphemeral() {
  if (g_address.is_unix) return false;
  return (g_address.socket.any.sa_family == AF_INET6 ? g_address.socket.ipv6.sin6_port
                                                     : g_address.socket.ipv4.sin_port) == 0;
}

// One line on stderr saying where it serves, for every TCP address: the user who chose a port wants
// to see it taken as much as the one who asked for PORT 0 wants to learn which (read back into
// g_address). A Unix socket's path is the address the user gave, and there is nothing to learn:
// silent. stdout stays the program's.
void AnnounceEndpoint(int fd) {
  socklen_t length = g_address.length;
  if (IsEphemeral() && getsockname(fd, &g_address.socket.any, &length) != 0) return;
  PublishHttpPort(ntohs(g_address.socket.any.sa_family == AF_INET6
                            ? g_address.socket.ipv6.sin6_port
                            : g_address.socket.ipv4.sin_port));
  // In a process heaprec attach loaded heaprec into, the program's stderr is the program's:
  // `heaprec attach` says where, from the port above.
  if (LoadedByAttach()) return;
  char endpoint[128];
  if (!FormatHttpEndpoint(g_address, endpoint, sizeof(endpoint))) return;
  const char* parts[] = {"heaprec: serving ", endpoint, "\n"};
  WriteStderr(parts, sizeof(parts) / sizeof(parts[0]));
}

// Waits for `events` on `fd` until `deadline_ns` (CLOCK_MONOTONIC). False on timeout or error.
bool WaitFor(int fd, short events, std::uint64_t deadline_ns) {
  for (;;) {
    std::uint64_t now = NowNs(CLOCK_MONOTONIC);
    if (now >= deadline_ns) return false;
    pollfd p = {fd, events, 0};
    int ready = poll(&p, 1, static_cast<int>((deadline_ns - now) / 1000000 + 1));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

// send() without SIGPIPE (the client may hang up), waiting at most kStallNs for room each time and
// giving up at the response's deadline: a client that stops reading never holds the thread long.
class SocketSink final : public ByteSink {
 public:
  SocketSink(int fd, std::uint64_t deadline_ns) : fd_(fd), deadline_ns_(deadline_ns) {}
  bool Write(const void* data, std::size_t size) override {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = send(fd_, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        std::uint64_t stall = NowNs(CLOCK_MONOTONIC) + kStallNs;
        if (errno != EAGAIN ||
            !WaitFor(fd_, POLLOUT, stall < deadline_ns_ ? stall : deadline_ns_)) {
          if (errno == EAGAIN) errno = ETIMEDOUT;
          return false;
        }
        continue;
      }
      p += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  bool Write(const char* text) { return Write(text, strlen(text)); }

 private:
  int fd_;
  std::uint64_t deadline_ns_;
};

// An answer without a profile: an error. Its body is `reason` and a newline, or nothing when
// `reason` is empty.
void SendText(SocketSink& out, const HttpRequest& request) {
  bool empty = request.reason[0] == '\0';
  char length[24];
  Appender digits(length, sizeof(length));
  digits.AddUnsigned(empty ? 0 : strlen(request.reason) + 1, 1);
  digits.Finish();
  char head[512];
  Appender a(head, sizeof(head));
  a.Add("HTTP/1.1 ");
  a.Add(HttpStatusText(request.verdict));
  a.Add("\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ");
  a.Add(length);
  if (request.allow[0] != '\0') {
    a.Add("\r\nAllow: ");
    a.Add(request.allow);
  }
  a.Add("\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n");
  if (!a.Finish() || !out.Write(head) || empty || request.head_only) return;
  out.Write(request.reason);
  out.Write("\n");
}

// The file name differs as Go's does: what a browser saves is named for the endpoint.
constexpr char kProfileHead[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/octet-stream\r\n"
    "Content-Disposition: attachment; filename=\"heap\"\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Cache-Control: no-store\r\n"
    "Connection: close\r\n"
    "\r\n";
constexpr char kAllocsHead[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: application/octet-stream\r\n"
    "Content-Disposition: attachment; filename=\"allocs\"\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Cache-Control: no-store\r\n"
    "Connection: close\r\n"
    "\r\n";

// The 200 head goes out with the first byte of the body, so that a profile that cannot be taken
// at all is still a 503.
class ProfileBody final : public ByteSink {
 public:
  ProfileBody(SocketSink& out, const char* head) : out_(out), head_(head) {}
  bool Write(const void* data, std::size_t size) override {
    if (!started_ && !out_.Write(head_)) return false;
    started_ = true;
    return out_.Write(data, size);
  }
  bool started() const { return started_; }

 private:
  SocketSink& out_;
  const char* head_;
  bool started_ = false;
};

// /debug/pprof/: what Go's index lists that heaprec serves, with the same relative links (so that
// it works behind a proxy's prefix) and the same one-line descriptions' spirit. Static: no
// allocation, no profile taken to show counts.
constexpr char kIndexHead[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/html; charset=utf-8\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Cache-Control: no-store\r\n"
    "Connection: close\r\n"
    "\r\n";
constexpr char kIndexPage[] =
    "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>/debug/pprof/</title>\n"
    "</head>\n<body>\n/debug/pprof/ (heaprec)<br>\n<br>\nProfiles:<br>\n<table>\n"
    "<tr><td><a href=\"allocs\">allocs</a></td><td>A sampling of all past memory "
    "allocations (alloc_space by default)</td></tr>\n"
    "<tr><td><a href=\"heap\">heap</a></td><td>A sampling of memory allocations of live "
    "objects (inuse_space by default)</td></tr>\n"
    "</table>\n<br>\n<a href=\"symbol\">symbol</a>: the symbol tables' names of addresses "
    "(POST or GET 0xADDR+0xADDR...)<br>\n"
    "<p>Not served: profile, trace, goroutine, threadcreate, block, mutex and cmdline are Go "
    "runtime profiles; delta profiles (seconds=N) and debug=N text are refused.</p>\n"
    "<p>Use: go tool pprof http://HOST:PORT/debug/pprof/heap</p>\n</body>\n</html>\n";

constexpr char kSymbolsHead[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "Cache-Control: no-store\r\n"
    "Connection: close\r\n"
    "\r\n";

// A POST's body: what came with the head, then the rest from the socket, each wait at most
// kStallNs and all of it within the response's deadline.
class BodySource final : public ByteSource {
 public:
  BodySource(int fd, const char* received, std::size_t received_size, std::uint64_t size,
             std::uint64_t deadline_ns)
      : fd_(fd), received_(received), deadline_ns_(deadline_ns), left_(size) {
    received_size_ = received_size < size ? received_size : static_cast<std::size_t>(size);
  }
  long Read(char* buffer, std::size_t size) override {
    if (left_ == 0) return 0;
    if (size > left_) size = static_cast<std::size_t>(left_);
    if (received_size_ > 0) {
      std::size_t n = received_size_ < size ? received_size_ : size;
      memcpy(buffer, received_, n);
      received_ += n;
      received_size_ -= n;
      left_ -= n;
      return static_cast<long>(n);
    }
    for (;;) {
      std::uint64_t stall = NowNs(CLOCK_MONOTONIC) + kStallNs;
      if (!WaitFor(fd_, POLLIN, stall < deadline_ns_ ? stall : deadline_ns_)) return -1;
      ssize_t n = recv(fd_, buffer, size, MSG_DONTWAIT);
      if (n == 0) return -1;  // the client closed before the whole body
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        return -1;
      }
      left_ -= static_cast<std::uint64_t>(n);
      return static_cast<long>(n);
    }
  }

 private:
  int fd_;
  const char* received_;
  std::size_t received_size_;
  std::uint64_t deadline_ns_;
  std::uint64_t left_;
};

// A GET's query string, "0x..+0x..".
class TextSource final : public ByteSource {
 public:
  TextSource(const char* text, std::size_t size) : text_(text), size_(size) {}
  long Read(char* buffer, std::size_t size) override {
    std::size_t n = size < size_ ? size : size_;
    if (n > 0) memcpy(buffer, text_, n);
    text_ += n;
    size_ -= n;
    return static_cast<long>(n);
  }

 private:
  const char* text_;
  std::size_t size_;
};

void ServeSymbols(int fd, SocketSink& out, const HttpRequest& request, const char* head,
                  std::size_t received, std::uint64_t deadline_ns) {
  if (!out.Write(kSymbolsHead) || request.head_only) return;
  if (request.has_body) {
    BodySource body(fd, head + request.head_size, received - request.head_size, request.body_size,
                    deadline_ns);
    WriteSymbolAnswers(body, out);
  } else {
    TextSource query(request.query, request.query != nullptr ? request.query_size : 0);
    WriteSymbolAnswers(query, out);
  }
}

// One connection: the head within kHeadDeadlineNs, then the answer. The body of a profile is
// close-delimited (streamed as it is encoded: no buffer of its size).
void Serve(int fd, char* head) {
  std::uint64_t head_deadline = NowNs(CLOCK_MONOTONIC) + kHeadDeadlineNs;
  std::size_t size = 0;
  HttpRequest request;
  for (;;) {
    request = ParseHttpRequest(head, size, kHeadBytes);
    if (request.verdict != HttpVerdict::kIncomplete) break;
    if (!WaitFor(fd, POLLIN, head_deadline)) return;
    ssize_t n = recv(fd, head + size, kHeadBytes - size, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;
    if (n > 0) size += static_cast<std::size_t>(n);
  }
  const std::uint64_t response_deadline = NowNs(CLOCK_MONOTONIC) + kResponseDeadlineNs;
  SocketSink out(fd, response_deadline);
  if (request.verdict == HttpVerdict::kSymbols) {
    ServeSymbols(fd, out, request, head, size, response_deadline);
  } else if (request.verdict == HttpVerdict::kIndex) {
    if (out.Write(kIndexHead) && !request.head_only) out.Write(kIndexPage);
  } else if (request.verdict != HttpVerdict::kServe) {
    SendText(out, request);
  } else if (request.head_only) {
    out.Write(request.allocs ? kAllocsHead : kProfileHead);
  } else {
    ProfileBody body(out, request.allocs ? kAllocsHead : kProfileHead);
    int error = StreamProfile(body, request.allocs ? schema::kAllocSpace : schema::kInuseSpace);
    // Before the first byte (no memory for the snapshot) the answer can still say so; a failure
    // midway cuts the body short, and the client sees a broken gzip stream.
    if (error != 0 && !body.started()) {
      HttpRequest failed;
      failed.verdict = HttpVerdict::kUnavailable;
      // ENOSYS: no recorder, a dormant process never attached (dormant.h).
      failed.reason = error == ENOSYS ? "not sampling: the process is dormant until heaprec attach"
                                      : strerrordesc_np(error);
      SendText(out, failed);
    }
  }
  // Closing with unread request bytes would reset the connection and could discard the answer
  // before the client read it: end our side, then read what is left until the client closes.
  shutdown(fd, SHUT_WR);
  std::uint64_t drain_deadline = NowNs(CLOCK_MONOTONIC) + kDrainNs;
  for (std::size_t drained = 0; drained < 64 * kHeadBytes && WaitFor(fd, POLLIN, drain_deadline);) {
    ssize_t n = recv(fd, head, kHeadBytes, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    if (n > 0) drained += static_cast<std::size_t>(n);
  }
}

void* ServeLoop(void* started_arg) {
  t_state.in_hook = true;  // everything this thread allocates is heaprec's own
  // The generation, and the slot in the lowest bit.
  const std::uintptr_t started = reinterpret_cast<std::uintptr_t>(started_arg);
  const unsigned generation = static_cast<unsigned>(started >> 1);
  const Listening listening = g_listenings[started & 1];
  char head[kHeadBytes];
  while (g_generation.load() == generation && IsOurListener(listening)) {
    int fd = MakeOwn([&] { return accept4(listening.fd, nullptr, nullptr, SOCK_CLOEXEC); });
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        poll(nullptr, 0, 100);  // out of descriptors or memory: try again a little later
        continue;
      }
      break;  // shut down: at exit, or stopped
    }
    g_connection.store(fd);
    Serve(fd, head);
    g_connection.store(-1);
    close(fd);
  }
  // Stopped (a detach): the socket is closed by the thread that alone uses it, once it is done,
  // and only if the descriptor is still the socket (a program's closefrom may have taken it).
  if (g_generation.load() != generation && IsOurListener(listening)) close(listening.fd);
  return nullptr;
}

bool ReadPublic() {
  const char* value = EnvironmentValue(kPublicVariable);
  return value != nullptr && IsTrue(value);
}

}  // namespace

namespace {

// Serves on `value` (HEAPREC_HTTP's, "PORT", "HOST:PORT" or "unix:PATH"); `is_public` allows an
// address other than loopback. Any failure is one line on stderr.
void StartHttpServer(const char* value, bool is_public) {
  Appender variable(g_variable, sizeof(g_variable));
  variable.Add(kVariable);
  variable.Add("=");
  variable.Add(value);
  if (!variable.Finish()) {
    memcpy(g_variable, kVariable, sizeof(kVariable));
    Complain("too long");
    return;
  }
  g_owner_pid = getpid();
  g_public = is_public;
  const char* error = nullptr;
  if (!ParseHttpAddress(g_variable + sizeof(kVariable), &g_address, &error)) {
    Complain(error);
    return;
  }
  if (!g_address.is_loopback && !g_public) {
    Complain(
        "not a loopback address, and whoever can reach it could read this process's heap "
        "profile",
        "; set HEAPREC_HTTP_PUBLIC=1 (heaprec run --http-public) to serve on it anyway");
    return;
  }
  int fd = Listen();
  if (fd < 0) return;
  if (!g_address.is_unix) AnnounceEndpoint(fd);
  struct stat st;
  const unsigned generation = g_generation.load() + 1;
  const unsigned slot = g_starts++ & 1;
  g_listenings[slot] = {fd, fstat(fd, &st) == 0 ? st.st_ino : 0};
  g_generation.store(generation);
  g_listener.store(fd);
  const std::uintptr_t started = (std::uintptr_t{generation} << 1) | slot;
  if (!StartHeaprecThread(ServeLoop, reinterpret_cast<void*>(started))) {
    g_listener.store(-1);
    close(fd);
    Complain("could not start the server thread");
  }
}

// A Unix socket's file, when it is still the one this process bound.
void RemoveSocketFile() {
  const char* path = g_address.socket.unix_socket.sun_path;
  struct stat st;
  if (g_address.is_unix && g_socket_inode != 0 && lstat(path, &st) == 0 &&
      st.st_ino == g_socket_inode && S_ISSOCK(st.st_mode)) {
    unlink(path);
  }
}

}  // namespace

void StartHttpServerIfConfigured() {
  const char* value = EnvironmentValue(kVariable);
  if (value == nullptr || value[0] == '\0') return;
  const bool is_public = ReadPublic();  // read before the variables leave the environment
  // Children started by fork-and-exec, posix_spawn or system() must not try the same address: the
  // exec hooks give it back to this process's own exec only (HttpVariablesForExec).
  char copy[sizeof(g_variable)];
  Appender kept(copy, sizeof(copy));
  kept.Add(value);
  const bool fits = kept.Finish();
  RemoveFromEnvironment(kVariable);
  RemoveFromEnvironment(kPublicVariable);
  if (!fits) {
    memcpy(g_variable, kVariable, sizeof(kVariable));
    Complain("too long");
    return;
  }
  StartHttpServer(copy, is_public);
}

void StartHttpServerAt(const char* value, bool is_public) {
  if (g_listener.load() >= 0 || value == nullptr || value[0] == '\0') return;
  StartHttpServer(value, is_public);
}

void StopHttpServer() {
  int listener = g_listener.exchange(-1);
  if (listener < 0 || getpid() != g_owner_pid) return;
  g_generation.fetch_add(1);  // the thread ends after this accept or answer, and closes it
  PublishHttpPort(0);
  shutdown(listener, SHUT_RDWR);
  RemoveSocketFile();
  g_socket_inode = 0;
}

void CloseHttpServerInChild() {
  int connection = g_connection.exchange(-1);
  if (connection >= 0) close(connection);
  g_listener.store(-1);
  // The current listening socket, and a stopped one whose thread had not closed it yet.
  for (Listening& listening : g_listenings) {
    if (listening.fd >= 0 && IsOurListener(listening)) close(listening.fd);
    listening = {};
  }
  g_socket_inode = 0;  // the parent's file, not this process's to remove
}

void StopHttpServerAtExit() {
  int listener = g_listener.load();
  if (listener < 0 || getpid() != g_owner_pid) return;
  shutdown(listener, SHUT_RDWR);  // wakes the thread's accept(), which then ends the thread
  RemoveSocketFile();
}

std::size_t HttpVariablesForExec(char* const* envp, const char** variables) {
  if (g_owner_pid == 0 || getpid() != g_owner_pid) return 0;
  for (char* const* p = envp; p != nullptr && *p != nullptr; ++p) {
    if (IsEnvironmentEntry(*p, kVariable, sizeof(kVariable) - 1)) return 0;
  }
  std::size_t count = 0;
  variables[count++] = g_variable;
  if (g_public) variables[count++] = "HEAPREC_HTTP_PUBLIC=1";
  return count;
}

}  // namespace heaprec::preload
