// The pull endpoint (HEAPREC_HTTP, `heaprec run --http`): a profiled program serves its live heap
// at /debug/pprof/heap to the real go tool pprof, the standalone pprof, curl and hand-made clients,
// answers what it does not serve with 400/404/405/431, survives clients that misbehave, and keeps
// its output and exit status; fork children and posix_spawn children do not serve, exec serves
// again. The program is programs/http_target.c: 4 MiB live at http_site_live, exact sampling.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "e2e_test_base.h"

namespace heaprec::e2e {
namespace {

constexpr int64_t kSiteBytes = 64 * 64 * 1024;  // http_target's 64 blocks of 64 KiB per site
constexpr char kServing[] = "heaprec: serving http://";

// Where the program listens: a TCP port on 127.0.0.1, or a Unix socket.
struct Endpoint {
  int port = 0;
  std::string socket_path;
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(port) + "/debug/pprof/heap";
  }
};

// A connected socket, or -1.
int Connect(const Endpoint& endpoint) {
  if (!endpoint.socket_path.empty()) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, endpoint.socket_path.c_str(), sizeof(address.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
    close(fd);
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(endpoint.port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return fd;
  close(fd);
  return -1;
}

void SendAll(int fd, const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close early (431): what it answered is still readable
    sent += static_cast<size_t>(n);
  }
}

// Everything the server sends until it closes (10 s guard).
std::string ReadToEnd(int fd) {
  std::string received;
  char buffer[65536];
  double deadline = MonotonicSeconds() + 10;
  for (;;) {
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 100) == 0) {
      if (MonotonicSeconds() > deadline) break;
      continue;
    }
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    received.append(buffer, static_cast<size_t>(n));
  }
  return received;
}

struct Response {
  int status = 0;
  std::string head;  // the status line and headers
  std::string body;
};

// Sends `request` whole, ends the sending side, reads the response until the server closes.
Response Exchange(const Endpoint& endpoint, const std::string& request) {
  Response response;
  int fd = Connect(endpoint);
  if (fd < 0) return response;
  SendAll(fd, request);
  shutdown(fd, SHUT_WR);
  std::string raw = ReadToEnd(fd);
  close(fd);
  size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return response;
  response.status = std::stoi(raw.substr(9, 3));
  response.head = raw.substr(0, end + 2);
  response.body = raw.substr(end + 4);
  return response;
}

Response Get(const Endpoint& endpoint, const std::string& target = "/debug/pprof/heap") {
  return Exchange(endpoint, "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

std::string Hex(uint64_t value) {
  char text[24];
  snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// A port nothing listens on now (bound to port 0, then released).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

// The test's own copy of a fetched profile, symbolized with `heaprec symbolize`; under
// <dir>/fetched/, apart from the profiles the program writes.
Profile SymbolizedProfile(const std::string& body, const std::string& test_dir) {
  std::string dir = test_dir + "/fetched";
  std::filesystem::create_directories(dir);
  std::string raw = dir + "/raw.pb.gz", symbolized = dir + "/symbolized.pb.gz";
  std::ofstream(raw, std::ios::binary) << body;
  RunResult run = RunProgram({HEAPREC_BIN, "symbolize", raw, "-o", symbolized}, dir);
  EXPECT_EQ(run.status, 0) << run.err;
  return ReadProfileFile(symbolized);
}

class HttpEndpointTest : public E2eTest {
 protected:
  // http_target ARGS preloaded, serving at `address`, exact sampling, stdin a pipe.
  BackgroundOptions Options(const std::string& address, std::vector<std::string> args = {},
                            EnvChanges env = {}) {
    BackgroundOptions options;
    options.argv = {HTTP_TARGET};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.cwd = dir_.path();
    env["LD_PRELOAD"] = HEAPREC_LIB;
    env["HEAPREC_HTTP"] = address;
    env["HEAPREC_SAMPLE_INTERVAL"] = "1";
    env["HEAPREC_OUTPUT"] = dir_ / "p.%p.pb.gz";
    options.env = env;
    options.stdin_pipe = true;
    return options;
  }

  // The port of the n-th "heaprec: serving" line on the program's stderr, or 0.
  static int ServingPort(const BackgroundProcess& process, size_t n = 0) {
    std::regex line(std::string(kServing) + "127\\.0\\.0\\.1:([0-9]+)/debug/pprof/heap");
    std::string err = process.Stderr();
    auto begin = std::sregex_iterator(err.begin(), err.end(), line);
    for (auto it = begin; it != std::sregex_iterator(); ++it, --n) {
      if (n == 0) return std::stoi((*it)[1].str());
    }
    return 0;
  }

  // programs/http_service.cc (the -O2 C++ service), served as Options serves http_target.
  BackgroundOptions ServiceOptions() {
    BackgroundOptions options = Options("127.0.0.1:0");
    options.argv = {HTTP_SERVICE};
    return options;
  }

  // Both pprofs are there (the suite builds one; go comes from golang-go).
  static void RequirePprofs() {
    ASSERT_NE(std::string(GO_BIN), "") << "go not found: install golang-go";
    ASSERT_NE(std::string(HEAPREC_PPROF), "") << "pprof was not built";
  }

  // Where pprof may write what it saves: the test's directory.
  EnvChanges PprofEnvironment() const {
    return {{"HOME", dir_.path()}, {"PPROF_TMPDIR", dir_.path()}};
  }

  // The output of `go tool pprof -top` and of the standalone pprof's, on `url`, by tool; each must
  // exit with 0.
  std::vector<std::pair<std::string, std::string>> PprofTop(const std::string& url) {
    std::vector<std::pair<std::string, std::string>> outputs;
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{GO_BIN, "tool", "pprof", "-top", "-sample_index=inuse_space",
                                   url},
          std::vector<std::string>{HEAPREC_PPROF, "-top", "-sample_index=inuse_space", url}}) {
      RunResult pprof = RunProgram(command, dir_.path(), PprofEnvironment(), 60);
      EXPECT_EQ(pprof.status, 0) << command[0] << "\n" << pprof.err;
      outputs.emplace_back(command[0], pprof.out);
    }
    return outputs;
  }

  // Ends stdin and checks the program ended as it would have unprofiled.
  static void ExpectOwnEnding(BackgroundProcess& process, const std::string& out) {
    process.CloseStdin();
    RunResult result = process.Wait();
    EXPECT_EQ(result.status, 3) << result.err;
    EXPECT_EQ(result.out, out);
  }
};

TEST_F(HttpEndpointTest, ServesTheLiveHeapFreshEachTime) {
  BackgroundProcess process(Options("127.0.0.1:0"));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  ASSERT_NE(endpoint.port, 0) << process.Stderr();

  Response first = Get(endpoint);
  ASSERT_EQ(first.status, 200) << first.head;
  for (const char* header :
       {"\r\nContent-Type: application/octet-stream\r\n",
        "\r\nContent-Disposition: attachment; filename=\"heap\"\r\n", "\r\nConnection: close\r\n",
        "\r\nX-Content-Type-Options: nosniff\r\n"}) {
    EXPECT_NE(first.head.find(header), std::string::npos) << header << "\n" << first.head;
  }
  ASSERT_GE(first.body.size(), 2u);
  EXPECT_EQ(first.body.substr(0, 2), "\x1f\x8b");  // gzip, as Go's endpoint sends it
  Profile profile = SymbolizedProfile(first.body, dir_.path());
  EXPECT_EQ(CommentText(profile, "reason"), "http");
  EXPECT_EQ(SiteValues(profile, "http_site_live").inuse_space, kSiteBytes);
  EXPECT_EQ(SiteValues(profile, "http_site_more").inuse_space, 0);

  process.Send("more");
  ASSERT_EQ(process.WaitForLine("more"), "more");
  Profile second = SymbolizedProfile(Get(endpoint).body, dir_.path());
  EXPECT_EQ(SiteValues(second, "http_site_more").inuse_space, kSiteBytes);

  Response head = Exchange(endpoint, "HEAD /debug/pprof/heap HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  // Nothing was written to disk for the requests: only the final profile appears, at exit.
  EXPECT_TRUE(Profiles().empty());
  ExpectOwnEnding(process, "ready\nmore\ndone\n");
  ASSERT_EQ(Profiles().size(), 1u);
  EXPECT_EQ(CommentText(ReadProfileFile(Profiles()[0]), "reason"), "exit");
}

TEST_F(HttpEndpointTest, GoToolPprofAndStandalonePprofFetchIt) {
  ASSERT_NE(std::string(GO_BIN), "") << "go not found: install golang-go";
  ASSERT_NE(std::string(HEAPREC_PPROF), "") << "pprof was not built";
  BackgroundProcess process(Options("127.0.0.1:0"));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  ASSERT_NE(endpoint.port, 0) << process.Stderr();
  // Default symbolization: the profile's named mappings are left alone, and /debug/pprof/symbol is
  // asked for those left without names (libc's internal functions).
  for (const auto& [pprof, out] : PprofTop(endpoint.Url())) {
    // 64 x 64 KiB = 4096kB, flat in http_site_live (4MB when pprof picks MB for the total).
    EXPECT_TRUE(std::regex_search(out, std::regex("\\b(4096kB|4MB) .* http_site_live\n")))
        << pprof << "\n"
        << out;
    EXPECT_NE(out.find("reason=http"), std::string::npos) << out;
  }
  ExpectOwnEnding(process, "ready\ndone\n");
}

// What Go users try after /heap: the index page at /debug/pprof/ and /debug/pprof/allocs, the same
// profile opening on alloc_space in both pprofs (and /heap still on inuse_space).
TEST_F(HttpEndpointTest, ServesTheIndexAndAllocsAsGoDoes) {
  ASSERT_NO_FATAL_FAILURE(RequirePprofs());
  BackgroundProcess process(Options("127.0.0.1:0"));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  ASSERT_NE(endpoint.port, 0) << process.Stderr();

  for (const char* path : {"/debug/pprof/", "/debug/pprof"}) {
    Response index = Get(endpoint, path);
    EXPECT_EQ(index.status, 200) << path << "\n" << index.head;
    EXPECT_NE(index.head.find("\r\nContent-Type: text/html; charset=utf-8\r\n"), std::string::npos)
        << index.head;
    for (const char* link : {"<a href=\"heap\">heap</a>", "<a href=\"allocs\">allocs</a>",
                             "<a href=\"symbol\">symbol</a>"}) {
      EXPECT_NE(index.body.find(link), std::string::npos) << link << "\n" << index.body;
    }
  }
  Response allocs = Get(endpoint, "/debug/pprof/allocs");
  ASSERT_EQ(allocs.status, 200) << allocs.head;
  EXPECT_NE(allocs.head.find("filename=\"allocs\""), std::string::npos) << allocs.head;
  Profile profile = SymbolizedProfile(allocs.body, dir_.path());
  EXPECT_EQ(profile.default_sample_type, "alloc_space");
  EXPECT_EQ(SiteValues(profile, "http_site_live").inuse_space, kSiteBytes);
  EXPECT_EQ(SymbolizedProfile(Get(endpoint).body, dir_.path()).default_sample_type, "inuse_space");

  const std::string base = "http://127.0.0.1:" + std::to_string(endpoint.port) + "/debug/pprof/";
  for (const auto& [path, type] : {std::pair<std::string, std::string>{"allocs", "alloc_space"},
                                   std::pair<std::string, std::string>{"heap", "inuse_space"}}) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{GO_BIN, "tool", "pprof", "-top", base + path},
          std::vector<std::string>{HEAPREC_PPROF, "-top", base + path}}) {
      RunResult pprof = RunProgram(command, dir_.path(), PprofEnvironment(), 60);
      EXPECT_EQ(pprof.status, 0) << command[0] << "\n" << pprof.err;
      EXPECT_NE(pprof.out.find("Type: " + type + "\n"), std::string::npos)
          << command[0] << " " << path << "\n"
          << pprof.out;
    }
  }
  ExpectOwnEnding(process, "ready\ndone\n");
}

// An -O2 -g C++ PIE executable (programs/http_service.cc) as users serve it: go tool pprof's own
// local symbolization named few of its functions (not the one holding the heap), so the profile
// carries the names of the symbol tables (preload/http/served_symbols.h), which both pprofs show,
// in -top and in the web UI; /debug/pprof/symbol answers the same addresses from the same tables.
TEST_F(HttpEndpointTest, PprofNamesTheFunctionsOfAnOptimizedCxxService) {
  ASSERT_NE(std::string(GO_BIN), "") << "go not found: install golang-go";
  BackgroundProcess process(ServiceOptions());
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  ASSERT_NE(endpoint.port, 0) << process.Stderr();
  // 256 x 16 KiB = 4096kB, flat in Registry::Open (pprof shortens the demangled names).
  const std::regex open("\\b(409[0-9](\\.[0-9]+)?kB|4MB) .* service::Registry::Open\n");
  for (const auto& [pprof, out] : PprofTop(endpoint.Url())) {
    EXPECT_TRUE(std::regex_search(out, open)) << pprof << "\n" << out;
    EXPECT_NE(out.find("(anonymous namespace)::Journal::Append\n"), std::string::npos)
        << pprof << "\n"
        << out;
    EXPECT_EQ(out.find("[http_service]"), std::string::npos) << out;
  }
  const EnvChanges env = PprofEnvironment();

  // The web UI of go tool pprof -http, read as a browser would.
  const int ui_port = FreePort();
  ASSERT_GT(ui_port, 0);
  BackgroundOptions ui;
  ui.argv = {
      GO_BIN,        "tool", "pprof", "-no_browser", "-http=127.0.0.1:" + std::to_string(ui_port),
      endpoint.Url()};
  ui.cwd = dir_.path();
  ui.env = env;
  BackgroundProcess web(ui);
  Response page;
  for (double deadline = MonotonicSeconds() + 30;
       MonotonicSeconds() < deadline && page.status != 200; usleep(100 * 1000)) {
    page = Get(Endpoint{ui_port, ""}, "/ui/top");
  }
  ASSERT_EQ(page.status, 200) << web.Stderr();
  EXPECT_NE(page.body.find("service::Registry::Open"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("Journal::Append"), std::string::npos);

  // The symbol endpoint, asked as pprof asks it, for the addresses of the served profile.
  Profile raw = ReadProfile(Get(endpoint).body);
  std::string query;
  for (const Location& location : raw.locations) {
    query += (query.empty() ? "" : "+") + Hex(location.address);
  }
  EXPECT_EQ(Get(endpoint, "/debug/pprof/symbol").body, "num_symbols: 1\n");
  Response names = Exchange(endpoint, "POST /debug/pprof/symbol HTTP/1.1\r\nContent-Length: " +
                                          std::to_string(query.size()) + "\r\n\r\n" + query);
  EXPECT_EQ(names.status, 200);
  EXPECT_EQ(names.body.rfind("num_symbols: 1\n", 0), 0u) << names.body;
  EXPECT_TRUE(
      std::regex_search(names.body, std::regex("\n0x[0-9a-f]+ _ZN7service8Registry4OpenEi\n")))
      << names.body;
  EXPECT_NE(
      Get(endpoint, "/debug/pprof/symbol?" + query).body.find(" _ZN7service8Registry4OpenEi\n"),
      std::string::npos);
  process.CloseStdin();
  EXPECT_EQ(process.Wait().status, 0);
}

// `heaprec fetch`: the served profile, symbolized here from the DWARF, names the functions with
// their files and lines (where the endpoint gave names only); one line for each way it can fail.
TEST_F(HttpEndpointTest, FetchSymbolizesTheServedProfileFully) {
  BackgroundProcess process(ServiceOptions());
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  ASSERT_NE(endpoint.port, 0) << process.Stderr();
  const std::string out = dir_ / "fetched.pb.gz";
  EnvChanges env = {{"HEAPREC_CACHE_DIR", "off"}};
  RunResult fetch = RunProgram({HEAPREC_BIN, "fetch", endpoint.Url(), "-o", out}, dir_.path(), env);
  ASSERT_EQ(fetch.status, 0) << fetch.err;
  Profile profile = ReadProfileFile(out);
  EXPECT_EQ(CommentText(profile, "reason"), "http");
  bool open_with_line = false;
  for (const Location& location : profile.locations) {
    for (const Line& line : location.lines) {
      for (const Function& f : profile.functions) {
        open_with_line |= f.id == line.function_id && f.name == "service::Registry::Open(int)" &&
                          f.filename.ends_with("http_service.cc") && line.line > 0;
      }
    }
  }
  EXPECT_TRUE(open_with_line) << "no service::Registry::Open(int) with its file and line";
  RunResult report =
      RunProgram({HEAPREC_BIN, "report", "--lines", "--top", "3", out}, dir_.path(), env);
  EXPECT_TRUE(
      std::regex_search(report.out, std::regex("service::Registry::Open http_service.cc:[0-9]+\n")))
      << report.out << report.err;

  struct Failure {
    std::string url, line;
  };
  const std::string base = "http://127.0.0.1:" + std::to_string(endpoint.port);
  const std::string refused =
      "http://127.0.0.1:" + std::to_string(FreePort()) + "/debug/pprof/heap";
  for (const Failure& f : std::vector<Failure>{
           {refused, "heaprec fetch: could not fetch " + refused + ": "},
           {base + "/debug/pprof/other",
            "heaprec fetch: " + base + "/debug/pprof/other answered HTTP 404: not found"},
           {base + "/debug/pprof/symbol",
            "heaprec fetch: " + base +
                "/debug/pprof/symbol did not answer with a pprof profile ("}}) {
    RunResult r =
        RunProgram({HEAPREC_BIN, "fetch", f.url, "-o", dir_ / "failed.pb.gz"}, dir_.path(), env);
    EXPECT_EQ(r.status, 1) << f.url << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(f.line, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "failed.pb.gz"));
  }
  process.CloseStdin();
  EXPECT_EQ(process.Wait().status, 0);
}

TEST_F(HttpEndpointTest, AnswersWhatItDoesNotServeAndSurvivesBadClients) {
  BackgroundProcess process(Options("127.0.0.1:0"));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  ASSERT_NE(endpoint.port, 0) << process.Stderr();

  EXPECT_EQ(Get(endpoint, "/").status, 404);
  EXPECT_EQ(Get(endpoint, "/debug/pprof/goroutine").status, 404);
  // Addresses in no object: no lines, as Go answers them.
  Response symbols =
      Exchange(endpoint, "POST /debug/pprof/symbol HTTP/1.1\r\nContent-Length: 3\r\n\r\n0x1");
  EXPECT_EQ(symbols.status, 200);
  EXPECT_EQ(symbols.body, "num_symbols: 1\n");
  EXPECT_EQ(Exchange(endpoint, "POST /debug/pprof/symbol HTTP/1.1\r\n\r\n").status, 411);
  // A body shorter than its Content-Length: the client gives up, the server is not stuck.
  Response cut =
      Exchange(endpoint, "POST /debug/pprof/symbol HTTP/1.1\r\nContent-Length: 900\r\n\r\n0x1+");
  EXPECT_EQ(cut.status, 200);
  Response post = Exchange(endpoint, "POST /debug/pprof/heap HTTP/1.1\r\n\r\n");
  EXPECT_EQ(post.status, 405);
  EXPECT_NE(post.head.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << post.head;
  Response delta = Get(endpoint, "/debug/pprof/heap?seconds=30");
  EXPECT_EQ(delta.status, 400);
  EXPECT_NE(delta.body.find("seconds=N"), std::string::npos) << delta.body;
  EXPECT_EQ(Exchange(endpoint, "\x16\x03\x01 garbage\r\n\r\n").status, 400);
  Response huge =
      Exchange(endpoint, "GET /debug/pprof/heap HTTP/1.1\r\nCookie: " + std::string(20000, 'c'));
  EXPECT_EQ(huge.status, 431);
  EXPECT_EQ(Get(endpoint, "/debug/pprof/heap?gc=1&debug=0").status, 200);

  // Connects and sends nothing; connects, asks, and hangs up after a few bytes of the answer.
  int silent = Connect(endpoint);
  ASSERT_GE(silent, 0);
  close(silent);
  int impatient = Connect(endpoint);
  ASSERT_GE(impatient, 0);
  SendAll(impatient, "GET /debug/pprof/heap HTTP/1.1\r\n\r\n");
  char few[10];
  EXPECT_GT(recv(impatient, few, sizeof(few), MSG_WAITALL), 0);
  close(impatient);

  // Still serving, and the program noticed nothing.
  Profile profile = SymbolizedProfile(Get(endpoint).body, dir_.path());
  EXPECT_EQ(SiteValues(profile, "http_site_live").inuse_space, kSiteBytes);
  ExpectOwnEnding(process, "ready\ndone\n");
  std::vector<std::string> err = Lines(process.Stderr());
  ASSERT_EQ(err.size(), 1u) << process.Stderr();
  EXPECT_EQ(err[0].rfind(kServing, 0), 0u);
}

TEST_F(HttpEndpointTest, ExitWaitsForNoClient) {
  BackgroundProcess process(Options("127.0.0.1:0"));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint endpoint{ServingPort(process), ""};
  // A client that connected and says nothing holds the server thread for its 5 s head deadline;
  // the program's exit must not wait for it, and the final profile is written all the same.
  int silent = Connect(endpoint);
  ASSERT_GE(silent, 0);
  double start = MonotonicSeconds();
  ExpectOwnEnding(process, "ready\ndone\n");
  EXPECT_LT(MonotonicSeconds() - start, 4.5) << "exit waited for the silent client";
  close(silent);
  ASSERT_EQ(Profiles().size(), 1u);
  EXPECT_EQ(CommentText(ReadProfileFile(Profiles()[0]), "reason"), "exit");
}

TEST_F(HttpEndpointTest, UnixSocketWithCurlReplacesAStaleOne) {
  std::string path = dir_ / "heap.sock";
  {  // a socket file nobody listens on, as a killed process leaves it
    int stale = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    ASSERT_EQ(bind(stale, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    close(stale);
  }
  BackgroundProcess process(Options(path));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  EXPECT_EQ(process.Stderr(), "");  // no port to announce: the path is the address
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::string fetched = dir_ / "curl.pb.gz";
  RunResult curl =
      RunProgram({"/usr/bin/curl", "--silent", "--show-error", "--fail", "--unix-socket", path,
                  "-o", fetched, "http://localhost/debug/pprof/heap"},
                 dir_.path(), {}, 30);
  ASSERT_EQ(curl.status, 0) << curl.err;
  Profile profile = SymbolizedProfile(ReadFile(fetched), dir_.path());
  EXPECT_EQ(SiteValues(profile, "http_site_live").inuse_space, kSiteBytes);
  ExpectOwnEnding(process, "ready\ndone\n");
  EXPECT_NE(stat(path.c_str(), &st), 0) << "the socket file outlived the process";
}

// A dormant process never attached has nothing to serve, says so, and still cleans up at exit.
TEST_F(HttpEndpointTest, DormantProcessAnswersUnavailableAndRemovesItsSocket) {
  std::string path = dir_ / "heap.sock";
  BackgroundProcess process(
      Options(path, {}, {{"HEAPREC_DORMANT", "1"}, {"HEAPREC_DUMP_SIGNAL", "SIGUSR2"}}));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Response response = Get({0, path});
  EXPECT_EQ(response.status, 503) << response.head;
  EXPECT_NE(response.body.find("dormant"), std::string::npos) << response.body;
  ExpectOwnEnding(process, "ready\ndone\n");
  struct stat st;
  EXPECT_NE(stat(path.c_str(), &st), 0) << "the socket file outlived the process";
  EXPECT_TRUE(Profiles().empty());
}

TEST_F(HttpEndpointTest, ForkAndSpawnChildrenDoNotServeTheParentDoes) {
  // A Unix socket: a child that tried the parent's address would find it in use and say so.
  std::string path = dir_ / "heap.sock";
  BackgroundProcess process(Options(path, {"fork-exec", HTTP_TARGET, "child"}));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Profile profile = SymbolizedProfile(Get({0, path}).body, dir_.path());
  EXPECT_EQ(SiteValues(profile, "http_site_live").inuse_space, kSiteBytes);
  EXPECT_EQ(SiteValues(profile, "http_site_child").inuse_space, 0);
  ExpectOwnEnding(process, "child\nchild\nchildren 0 0\nready\ndone\n");
  EXPECT_EQ(process.Stderr(), "");
  // Port 0 the same: one "serving" line, the parent's, where children would each have found a
  // port of their own.
  TempDir other;
  BackgroundOptions options = Options("127.0.0.1:0", {"fork-exec", HTTP_TARGET, "child"});
  options.cwd = other.path();
  BackgroundProcess again(options);
  ASSERT_EQ(again.WaitForLine("ready"), "ready") << again.Stderr();
  EXPECT_EQ(Get({ServingPort(again), ""}).status, 200);
  ExpectOwnEnding(again, "child\nchild\nchildren 0 0\nready\ndone\n");
  EXPECT_EQ(Lines(again.Stderr()).size(), 1u) << again.Stderr();
}

TEST_F(HttpEndpointTest, ExecServesAgainAndTheOldListenerIsGone) {
  BackgroundProcess process(Options("127.0.0.1:0"));
  ASSERT_EQ(process.WaitForLine("ready"), "ready") << process.Stderr();
  Endpoint before{ServingPort(process), ""};
  ASSERT_NE(before.port, 0);
  process.Send("exec");
  // The new program prints "ready" again; its stdout follows the first one's.
  double deadline = MonotonicSeconds() + 20;
  while (ServingPort(process, 1) == 0 && MonotonicSeconds() < deadline) usleep(10000);
  Endpoint after{ServingPort(process, 1), ""};
  ASSERT_NE(after.port, 0) << process.Stderr();
  EXPECT_NE(after.port, before.port);
  EXPECT_EQ(Connect(before), -1) << "the first program's listener survived exec";
  Response response = Get(after);
  EXPECT_EQ(response.status, 200);
  ExpectOwnEnding(process, "ready\nready\ndone\n");
}

// A socket bound to a port of 127.0.0.1 the kernel chose, and "127.0.0.1:PORT"; -1 on failure.
int BoundLoopbackSocket(std::string* where) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *where = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  return fd;
}

// A port the user chose is announced as PORT 0's is, on stderr, the program's stdout untouched.
TEST_F(HttpEndpointTest, ExplicitPortSaysWhereItServes) {
  std::string where;
  int probe = BoundLoopbackSocket(&where);
  ASSERT_GE(probe, 0);
  close(probe);  // free again: the program takes it (a race with other programs, unlikely)
  RunResult run = RunProgram({HTTP_TARGET}, dir_.path(),
                             {{"LD_PRELOAD", HEAPREC_LIB},
                              {"HEAPREC_HTTP", where},
                              {"HEAPREC_OUTPUT", dir_ / "p.%p.pb.gz"}},
                             30);
  EXPECT_EQ(run.status, 3);
  EXPECT_EQ(run.out, "ready\ndone\n");
  EXPECT_EQ(run.err, "heaprec: serving http://" + where + "/debug/pprof/heap\n");
  RunResult cli = HeaprecRun(dir_.path(), {"--http", where, "--top", "0"}, {HTTP_TARGET});
  EXPECT_EQ(cli.status, 3) << cli.err;
  EXPECT_EQ(cli.out, "ready\ndone\n");
  EXPECT_NE(cli.err.find("heaprec: serving http://" + where + "/debug/pprof/heap\n"),
            std::string::npos)
      << cli.err;
}

TEST_F(HttpEndpointTest, PortInUseIsOneLineAndTheProgramRunsProfiled) {
  std::string where;
  int busy = BoundLoopbackSocket(&where);
  ASSERT_GE(busy, 0);
  ASSERT_EQ(listen(busy, 1), 0);
  RunResult run = RunProgram({HTTP_TARGET}, dir_.path(),
                             {{"LD_PRELOAD", HEAPREC_LIB},
                              {"HEAPREC_HTTP", where},
                              {"HEAPREC_OUTPUT", dir_ / "p.%p.pb.gz"}},
                             30);
  close(busy);
  EXPECT_EQ(run.status, 3);
  EXPECT_EQ(run.out, "ready\ndone\n");
  EXPECT_EQ(run.err, "heaprec: HEAPREC_HTTP=" + where +
                         ": address already in use; serving no profiles over HTTP\n");
  EXPECT_EQ(Profiles().size(), 1u);  // profiled all the same
}

TEST_F(HttpEndpointTest, RefusesNonLoopbackAndBadAddresses) {
  struct Case {
    const char* address;
    const char* says;
  };
  for (Case c : {Case{"0.0.0.0:0", "not a loopback address"}, Case{"[::]:0", "not a loopback"},
                 Case{"nonsense", "expected PORT, HOST:PORT"}, Case{"70000", "out of range"},
                 Case{"example.com:80", "no name lookup"}}) {
    RunResult run = RunProgram({HTTP_TARGET}, dir_.path(),
                               {{"LD_PRELOAD", HEAPREC_LIB}, {"HEAPREC_HTTP", c.address}}, 30);
    EXPECT_EQ(run.status, 3) << c.address;
    EXPECT_EQ(run.out, "ready\ndone\n") << c.address;
    std::vector<std::string> lines = Lines(run.err);
    ASSERT_EQ(lines.size(), 1u) << run.err;
    EXPECT_EQ(lines[0].rfind(std::string("heaprec: HEAPREC_HTTP=") + c.address + ": ", 0), 0u)
        << run.err;
    EXPECT_NE(lines[0].find(c.says), std::string::npos) << run.err;
  }
}

TEST_F(HttpEndpointTest, HeaprecRunPassesHttpAndChecksItFirst) {
  RunResult bad = HeaprecRun(dir_.path(), {"--http", "6060x"}, {HTTP_TARGET});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(Lines(bad.err).size(), 1u) << bad.err;
  EXPECT_EQ(bad.err.rfind("heaprec run: --http '6060x' is invalid: expected PORT", 0), 0u)
      << bad.err;
  RunResult open = HeaprecRun(dir_.path(), {"--http", "0.0.0.0:6060"}, {HTTP_TARGET});
  EXPECT_EQ(open.status, 2);
  EXPECT_NE(open.err.find("add --http-public"), std::string::npos) << open.err;
  RunResult lone = HeaprecRun(dir_.path(), {"--http-public"}, {HTTP_TARGET});
  EXPECT_EQ(lone.status, 2) << lone.err;
  RunResult run = HeaprecRun(dir_.path(), {"--http", "127.0.0.1:0", "--top", "0"}, {HTTP_TARGET});
  EXPECT_EQ(run.status, 3) << run.err;
  EXPECT_EQ(run.out, "ready\ndone\n");
  EXPECT_TRUE(std::regex_search(run.err, std::regex("(^|\n)heaprec: serving http://127\\.0\\.0\\.1:"
                                                    "[0-9]+/debug/pprof/heap\n")))
      << run.err;
}

}  // namespace
}  // namespace heaprec::e2e
