// Symbolization for production, end to end: wl_stripped (a stripped binary with a build id, its
// DWARF in a separate debug file kept elsewhere) is profiled by `heaprec run --no-symbolize`, then
// `heaprec symbolize` and the reading commands find its debug file through a debug path (build-id
// tree, debuglink layout), Debian's real debuginfod server started on a free port, and binary
// paths; they name a binary they cannot find with where they looked, refuse another build, take
// many files and directories, and symbolize in memory what a profile lacks.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"
#include "profile/pprof_reader.h"

namespace heaprec::e2e {
namespace {

namespace fs = std::filesystem;

// A site the program printed: its function and the line of its malloc call.
struct Site {
  std::string function;
  int64_t line = 0;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Whether some location of the profile has the function at that line.
bool HasFrame(const Profile& profile, const Site& site) {
  for (const Location& location : profile.locations) {
    for (const Line& line : location.lines) {
      for (const Function& f : profile.functions) {
        if (f.id == line.function_id && f.name == site.function && line.line == site.line) {
          return true;
        }
      }
    }
  }
  return false;
}

// A port nothing listens on now, from the kernel (bound to port 0, then released).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = -1;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

// The HTTP status of GET `path` on 127.0.0.1:`port`, 0 when nothing answered within a second.
int HttpStatus(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  timeval timeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int status = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    char reply[64] = {};
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size()) &&
        recv(fd, reply, sizeof reply - 1, MSG_WAITALL) > 12) {
      std::sscanf(reply, "HTTP/%*s %d", &status);
    }
  }
  close(fd);
  return status;
}

// Debian's debuginfod serving the ELF/DWARF files of one directory from a memory-only index, on a
// free port of every interface (its 0.188 cannot be limited to loopback; the tests only ever
// connect to 127.0.0.1). The destructor (BackgroundProcess's) kills it with SIGKILL, whatever
// happened in the test.
class DebuginfodServer {
 public:
  // Starts it and waits (at most 10 s) until it serves `build_id`'s debuginfo. A port taken in
  // between by another process makes the server exit: then another port is tried.
  DebuginfodServer(const std::string& work_dir, const std::string& served_dir,
                   const std::string& build_id) {
    for (int attempt = 0; attempt < 3 && url_.empty(); ++attempt) {
      port_ = FreePort();
      if (port_ <= 0) continue;
      std::string cwd = work_dir + "/debuginfod-" + std::to_string(attempt);
      fs::create_directories(cwd);
      BackgroundOptions options;
      // A memory-only index of the ELF/DWARF files (-F) of one directory, scanned once (-t 0),
      // without the sources; under `timeout`, which kills it after a minute should this process
      // die before its destructor runs.
      const std::string port = std::to_string(port_);
      options.argv = {"/usr/bin/timeout", "-s", "KILL", "60", HEAPREC_DEBUGINFOD_SERVER};
      for (const char* arg : {"-p", port.c_str(), "-d", ":memory:", "-F", "-t", "0", "-g", "0",
                              "-c", "1", "--disable-source-scan"}) {
        options.argv.push_back(arg);
      }
      options.argv.push_back(served_dir);
      options.cwd = cwd;
      options.env = {{"HOME", cwd}, {"DEBUGINFOD_URLS", std::nullopt}};
      server_ = std::make_unique<BackgroundProcess>(options);
      const std::string path = "/buildid/" + build_id + "/debuginfo";
      for (double deadline = MonotonicSeconds() + 10; MonotonicSeconds() < deadline;
           usleep(50 * 1000)) {
        if (HttpStatus(port_, path) == 200) {
          url_ = "http://127.0.0.1:" + std::to_string(port_);
          break;
        }
        siginfo_t info = {};
        if (waitid(P_PID, static_cast<id_t>(server_->pid()), &info, WEXITED | WNOHANG | WNOWAIT) ==
                0 &&
            info.si_pid == server_->pid()) {
          break;  // it exited: its port was taken
        }
      }
      if (url_.empty()) log_ += server_->Stderr();
    }
  }

  const std::string& url() const { return url_; }  // "" when it never served the file
  const std::string& log() const { return log_; }

 private:
  int port_ = -1;
  std::string url_, log_;
  std::unique_ptr<BackgroundProcess> server_;
};

class SymbolizeE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The program runs from a copy, so that a test can move, delete or replace it.
    app_dir_ = dir_ / "app";
    app_ = app_dir_ + "/wl_stripped";
    fs::create_directories(app_dir_);
    fs::copy_file(WL_STRIPPED, app_);
  }

  // Runs the program under heaprec, unsymbolized and exact, into `out_dir`; returns its final
  // profile. `args` are the program's; with `dump_interval`, interval profiles too.
  std::string RunProfiled(const std::string& out_dir, const std::vector<std::string>& args = {"1"},
                          const std::string& dump_interval = "") {
    fs::create_directories(out_dir);
    std::vector<std::string> flags = {"--no-symbolize", "--sample-interval", "1", "--top", "0"};
    if (!dump_interval.empty()) flags.insert(flags.end(), {"--dump-interval", dump_interval});
    std::vector<std::string> program = {app_};
    program.insert(program.end(), args.begin(), args.end());
    const std::vector<std::string> before = ListProfiles(out_dir);
    RunResult run = HeaprecRun(out_dir, flags, program, {{"HEAPREC_CACHE_DIR", "off"}});
    EXPECT_EQ(run.status, 0) << run.err;
    std::istringstream lines(run.out);
    std::string tag;
    sites_.clear();
    for (Site site; lines >> tag >> site.function >> site.line;) {
      if (tag == "site") sites_.push_back(site);
    }
    EXPECT_EQ(sites_.size(), 2u) << run.out;
    // Its final profile: p.<pid>.pb.gz, beside its peak and numbered ones (and other runs').
    std::string final_profile;
    for (const std::string& file : ListProfiles(out_dir)) {
      const std::string name = fs::path(file).filename().string();
      if (std::count(before.begin(), before.end(), file) == 0 &&
          name.find_first_not_of("0123456789", 2) == name.size() - 6 && name.ends_with(".pb.gz")) {
        final_profile = file;
      }
    }
    EXPECT_FALSE(final_profile.empty()) << run.err;
    return final_profile;
  }

  // The build id the profile recorded for the program.
  std::string BuildIdOf(const std::string& profile) {
    for (const Mapping& m : ReadProfileFile(profile).mappings) {
      if (m.filename == app_) return m.build_id;
    }
    ADD_FAILURE() << "no mapping of " << app_ << " in " << profile;
    return "";
  }

  // DIR/.build-id/xx/rest.debug, as a -dbgsym package installs it.
  std::string BuildIdTree(const std::string& build_id) {
    std::string root = dir_ / "debug";
    std::string sub = root + "/.build-id/" + build_id.substr(0, 2);
    fs::create_directories(sub);
    fs::copy_file(WL_STRIPPED_DEBUG, sub + "/" + build_id.substr(2) + ".debug",
                  fs::copy_options::overwrite_existing);
    return root;
  }

  // The program the next runs profile: `program` in place of wl_stripped, at the same path.
  void UseProgram(const std::string& program) {
    fs::copy_file(program, app_, fs::copy_options::overwrite_existing);
  }

  // The unstripped build of WL_O2 in a directory of binaries, under the recorded file's name.
  std::string UnstrippedBinaries() {
    std::string dir = dir_ / "unstripped";
    fs::create_directories(dir);
    fs::copy_file(WL_O2_UNSTRIPPED, dir + "/wl_stripped", fs::copy_options::overwrite_existing);
    return dir;
  }

  // `heaprec ARGS...` in the test's directory with the symbol cache in `cache`.
  RunResult HeaprecCached(const std::vector<std::string>& args, const std::string& cache) {
    std::vector<std::string> argv = {HEAPREC_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, dir_.path(), {{"HEAPREC_CACHE_DIR", cache}}, 30);
  }

  // `heaprec ARGS...` in the test's directory, without the symbol cache (which would answer by
  // build id from an earlier test), under a hang guard.
  RunResult Heaprec(const std::vector<std::string>& args, EnvChanges env = {}) {
    std::vector<std::string> argv = {HEAPREC_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("HEAPREC_CACHE_DIR", "off");
    return RunProgram(argv, dir_.path(), env, 30);
  }

  void ExpectSymbolized(const std::string& profile) {
    heaprec::profile::Profile p = ReadProfileFile(profile);
    for (const Site& site : sites_) {
      EXPECT_TRUE(HasFrame(p, site))
          << profile << " lacks " << site.function << " at line " << site.line;
    }
  }
  void ExpectUnsymbolized(const std::string& profile) {
    heaprec::profile::Profile p = ReadProfileFile(profile);
    for (const Site& site : sites_) EXPECT_FALSE(HasFrame(p, site)) << site.function;
  }

  TempDir dir_;
  std::string app_dir_, app_;
  std::vector<Site> sites_;
};

TEST_F(SymbolizeE2eTest, DebugPathWithABuildIdTree) {
  std::string profile = RunProfiled(dir_ / "profiles");
  ExpectUnsymbolized(profile);  // the binary is stripped: nothing local names its functions
  std::string tree = BuildIdTree(BuildIdOf(profile));
  RunResult r = Heaprec({"symbolize", "--debug-path", tree, profile});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "heaprec symbolize: symbolized ")) << r.err;
  EXPECT_FALSE(Contains(r.err, "no binary")) << r.err;
  EXPECT_FALSE(Contains(r.err, "no debug info")) << r.err;
  ExpectSymbolized(profile);
}

TEST_F(SymbolizeE2eTest, DebugPathWithTheDebuglinkLayoutFromTheEnvironment) {
  std::string profile = RunProfiled(dir_ / "profiles");
  // DIR/<the binary's directory>/<its .gnu_debuglink name>, as GDB looks for it.
  std::string root = dir_ / "debug-tree";
  fs::create_directories(root + app_dir_);
  fs::copy_file(WL_STRIPPED_DEBUG, root + app_dir_ + "/wl_stripped.debug");
  RunResult r = Heaprec({"symbolize", profile}, {{"HEAPREC_DEBUG_PATH", "/nonexistent:" + root}});
  EXPECT_EQ(r.status, 0) << r.err;
  ExpectSymbolized(profile);
}

TEST_F(SymbolizeE2eTest, DebuginfodServesTheDebugFile) {
  std::string profile = RunProfiled(dir_ / "profiles");
  std::string build_id = BuildIdOf(profile);
  ASSERT_EQ(build_id.size(), 40u);
  std::string served = dir_ / "served";
  fs::create_directories(served);
  fs::copy_file(WL_STRIPPED_DEBUG, served + "/wl_stripped.debug");
  DebuginfodServer server(dir_.path(), served, build_id);
  ASSERT_FALSE(server.url().empty()) << "debuginfod never served the file:\n" << server.log();

  // The binary is there, stripped: its DWARF comes from the server (DEBUGINFOD_URLS).
  std::string cache = dir_ / "debuginfod-cache";
  EnvChanges env = {{"DEBUGINFOD_URLS", server.url()},
                    {"DEBUGINFOD_CACHE_PATH", cache},
                    {"DEBUGINFOD_TIMEOUT", "10"}};
  RunResult r = Heaprec({"symbolize", profile}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  ExpectSymbolized(profile);
  EXPECT_TRUE(fs::exists(cache + "/" + build_id + "/debuginfo")) << "not fetched through it";

  // The binary is gone: the debug file alone, from the server named by --debuginfod.
  std::string again = RunProfiled(dir_ / "again");
  fs::remove(app_);
  RunResult gone = Heaprec({"symbolize", "--debuginfod", server.url(), again},
                           {{"DEBUGINFOD_CACHE_PATH", dir_ / "cache-2"}});
  EXPECT_EQ(gone.status, 0) << gone.err;
  ExpectSymbolized(again);
}

TEST_F(SymbolizeE2eTest, UnreachableDebuginfodIsNamedAmongThePlacesLookedIn) {
  std::string profile = RunProfiled(dir_ / "profiles");
  fs::remove(app_);
  std::string url = "http://127.0.0.1:" + std::to_string(FreePort());
  RunResult r = Heaprec({"symbolize", "--debuginfod", url, profile},
                        {{"DEBUGINFOD_CACHE_PATH", dir_ / "cache"}, {"DEBUGINFOD_TIMEOUT", "5"}});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, ", debuginfod " + url + " (")) << r.err;
  ExpectUnsymbolized(profile);
}

TEST_F(SymbolizeE2eTest, BinaryPathFindsAMovedBinary) {
  std::string profile = RunProfiled(dir_ / "profiles");
  std::string build_id = BuildIdOf(profile);
  // The recorded path is gone; the binary is in a directory of binaries, its debug file beside it
  // (found through the binary's .gnu_debuglink, so only once the binary itself is found).
  std::string moved = dir_ / "moved";
  fs::create_directories(moved);
  fs::rename(app_, moved + "/wl_stripped");
  fs::copy_file(WL_STRIPPED_DEBUG, moved + "/wl_stripped.debug");
  std::string copy = dir_ / "copy.pb.gz";
  fs::copy_file(profile, copy);

  RunResult without = Heaprec({"symbolize", copy});
  EXPECT_EQ(without.status, 1) << without.err;
  ExpectUnsymbolized(copy);

  RunResult r = Heaprec({"symbolize", "--binary-path", "/nonexistent:" + moved, profile});
  EXPECT_EQ(r.status, 0) << r.err;
  ExpectSymbolized(profile);

  // pprof's layout, DIR/<build-id>/<name>, through HEAPREC_BINARY_PATH.
  std::string by_id = dir_ / "by-id";
  fs::create_directories(by_id + "/" + build_id);
  fs::rename(moved + "/wl_stripped", by_id + "/" + build_id + "/wl_stripped");
  fs::rename(moved + "/wl_stripped.debug", by_id + "/" + build_id + "/wl_stripped.debug");
  RunResult env = Heaprec({"symbolize", copy}, {{"HEAPREC_BINARY_PATH", by_id}});
  EXPECT_EQ(env.status, 0) << env.err;
  ExpectSymbolized(copy);
}

TEST_F(SymbolizeE2eTest, MissingBinaryIsNamedWithWhereItWasLookedFor) {
  std::string profile = RunProfiled(dir_ / "profiles");
  std::string build_id = BuildIdOf(profile);
  fs::remove(app_);
  // Another build of the program where the binary path points (through pprof's variable, the
  // fallback of HEAPREC_BINARY_PATH): refused for its build id.
  std::string others = dir_ / "others";
  fs::create_directories(others);
  fs::copy_file(WL_STRIPPED_REBUILT, others + "/wl_stripped");
  RunResult r = Heaprec({"symbolize", profile}, {{"PPROF_BINARY_PATH", others}});
  EXPECT_EQ(r.status, 1) << r.err;
  const std::string line = "heaprec symbolize: no binary for " + app_ + " (build id " + build_id +
                           "): looked in " + app_ + ", " + others + "/wl_stripped (another build: ";
  EXPECT_TRUE(Contains(r.err, line)) << r.err;
  EXPECT_TRUE(Contains(r.err, "debug path /usr/lib/debug")) << r.err;
  EXPECT_EQ(Count(r.err, "no binary for " + app_), 1u) << "named once: " << r.err;
  ExpectUnsymbolized(profile);
}

TEST_F(SymbolizeE2eTest, ReplacedBinaryIsRefused) {
  std::string profile = RunProfiled(dir_ / "profiles");
  std::string tree = BuildIdTree(BuildIdOf(profile));
  // The program was rebuilt in place; its debug file is still installed in the build-id tree.
  fs::remove(app_);
  fs::copy_file(WL_STRIPPED_REBUILT, app_);
  std::string copy = dir_ / "copy.pb.gz";
  fs::copy_file(profile, copy);
  RunResult r = Heaprec({"symbolize", "--debug-path", dir_ / "empty", copy});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, app_ + " (another build: ")) << r.err;
  ExpectUnsymbolized(copy);
  // The debug file of the right build is used, never the new binary.
  RunResult fixed = Heaprec({"symbolize", "--debug-path", tree, profile});
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  ExpectSymbolized(profile);
}

TEST_F(SymbolizeE2eTest, ManyFilesAndADirectoryInOneCall) {
  std::string first = RunProfiled(dir_ / "series");
  std::string second = RunProfiled(dir_ / "series");
  std::string single = RunProfiled(dir_ / "single");
  std::string tree = BuildIdTree(BuildIdOf(single));

  RunResult usage = Heaprec({"symbolize", dir_ / "series", single, "-o", dir_ / "out.pb.gz"});
  EXPECT_EQ(usage.status, 2) << usage.err;
  EXPECT_TRUE(Contains(usage.err, "heaprec symbolize: -o writes one profile, but 2 paths"))
      << usage.err;
  EXPECT_FALSE(fs::exists(dir_ / "out.pb.gz"));

  RunResult r = Heaprec({"symbolize", "--debug-path", tree, dir_ / "series", single});
  EXPECT_EQ(r.status, 0) << r.err;
  // Every profile of the directory (both runs' final and peak profiles), and the single one.
  const size_t count =
      ListProfiles(dir_ / "series").size() + ListProfiles(dir_ / "series", true).size() + 1;
  EXPECT_GE(count, 3u);
  EXPECT_TRUE(Contains(r.err, " in " + std::to_string(count) + " profiles")) << r.err;
  for (const std::string& file : {first, second, single}) ExpectSymbolized(file);
  // Rewritten in place, each file's old inode held the next one's (base/recycling_writer.h); none
  // is left behind under its spare's name.
  for (const auto& entry : fs::directory_iterator(dir_ / "series")) {
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  }
}

TEST_F(SymbolizeE2eTest, ReportSymbolizesInMemoryAndSaysWhatIsMissing) {
  std::string profile = RunProfiled(dir_ / "profiles");
  const std::string bytes = ReadFile(profile);

  RunResult bare = Heaprec({"report", profile});
  EXPECT_EQ(bare.status, 0) << bare.err;
  EXPECT_TRUE(Contains(bare.err, "heaprec report: no debug info for " + app_)) << bare.err;
  EXPECT_TRUE(Contains(bare.err, "heaprec report: " + profile + " is not fully symbolized ("))
      << bare.err;
  EXPECT_FALSE(Contains(bare.out, "keep_buffer")) << bare.out;

  RunResult found = Heaprec({"report", "--debug-path", BuildIdTree(BuildIdOf(profile)), profile});
  EXPECT_EQ(found.status, 0) << found.err;
  EXPECT_TRUE(Contains(found.out, "keep_buffer")) << found.out;
  EXPECT_TRUE(Contains(found.out, "make_name")) << found.out;
  EXPECT_FALSE(Contains(found.err, "symbolized")) << found.err;
  EXPECT_EQ(ReadFile(profile), bytes) << "report must never rewrite the profile";
}

TEST_F(SymbolizeE2eTest, LeaksOverAHalfSymbolizedSeries) {
  // Interval profiles of one process (one address for each site in all of them).
  std::string profiles = dir_ / "series";
  RunProfiled(profiles, {"12", "25"}, "0.05");
  std::vector<std::string> files;
  for (const std::string& file : ListProfiles(profiles)) {
    if (!Contains(file, ".peak.")) files.push_back(file);
  }
  ASSERT_GE(files.size(), 4u);
  std::string tree = BuildIdTree(BuildIdOf(files.back()));
  // Half of them symbolized, as when some were symbolized where the binaries were.
  std::vector<std::string> half = {HEAPREC_BIN, "symbolize", "--debug-path", tree};
  for (size_t i = 0; i < files.size(); i += 2) half.push_back(files[i]);
  ASSERT_EQ(RunProgram(half, dir_.path(), {{"HEAPREC_CACHE_DIR", "off"}}, 30).status, 0);

  // Without the debug file, the unsymbolized profiles name each site by address: said once.
  RunResult split = Heaprec({"leaks", "--format", "json", "--top", "0", profiles});
  EXPECT_EQ(split.status, 0) << split.err;
  EXPECT_EQ(Count(split.err, " not fully symbolized ("), 1u) << split.err;
  EXPECT_EQ(Count(split.err, "no debug info for " + app_), 1u) << split.err;
  EXPECT_EQ(Count(split.out, "\"site\": \"keep_buffer\""), 1u) << split.out;

  // With it, each site is one site again.
  RunResult joined =
      Heaprec({"leaks", "--format", "json", "--top", "0", "--debug-path", tree, profiles});
  EXPECT_EQ(joined.status, 0) << joined.err;
  EXPECT_FALSE(Contains(joined.err, "symbolized")) << joined.err;
  EXPECT_EQ(Count(joined.out, "\"site\": \"keep_buffer\""), 1u) << joined.out;
  EXPECT_EQ(Count(joined.out, "\"site\": \"make_name\""), 1u) << joined.out;
  EXPECT_EQ(Count(split.out, "\"site\": "), Count(joined.out, "\"site\": ") + 2)
      << "keep_buffer and make_name, each once by address too:\n"
      << split.out;
}

// A stripped -O2 binary still at its recorded path, and its unstripped build (the same build id)
// in a binary path: the unstripped one names the functions and their lines (pprof's order: the
// binary path before the recorded path). Before, the recorded path won and nothing was named.
TEST_F(SymbolizeE2eTest, UnstrippedBuildInABinaryPathBeatsTheStrippedRecordedFile) {
  UseProgram(WL_O2);
  std::string profile = RunProfiled(dir_ / "profiles");
  ExpectUnsymbolized(profile);
  RunResult r = Heaprec({"symbolize", "--binary-path", UnstrippedBinaries(), profile});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "no debug info")) << r.err;
  ExpectSymbolized(profile);
  // The same through pprof's variable.
  std::string again = RunProfiled(dir_ / "again");
  RunResult env =
      Heaprec({"report", "--lines", again}, {{"PPROF_BINARY_PATH", dir_ / "unstripped"}});
  EXPECT_EQ(env.status, 0) << env.err;
  EXPECT_TRUE(Contains(env.out, "keep_buffer wl_stripped.c:" + std::to_string(sites_[0].line)))
      << env.out << env.err;
}

// Every place looked in is named, each binary path given included, when nothing names a stripped
// binary's addresses (before, the binary paths were left out once the recorded file was found).
TEST_F(SymbolizeE2eTest, NoDebugInfoNamesEveryPlaceLookedIn) {
  UseProgram(WL_O2);
  std::string profile = RunProfiled(dir_ / "profiles");
  std::string build_id = BuildIdOf(profile);
  std::string empty = dir_ / "empty";
  fs::create_directories(empty);
  RunResult r = Heaprec({"symbolize", "--binary-path", "/nonexistent-bins", "--binary-path", empty,
                         "--debug-path", "/nonexistent-debug", profile});
  EXPECT_EQ(r.status, 0) << r.err;  // found, without debug info: reported, not a failure
  const std::string line = "heaprec symbolize: no debug info for " + app_ + " (build id " +
                           build_id + "): looked in binary path /nonexistent-bins, binary path " +
                           empty + ", debug path /nonexistent-debug, debug path /usr/lib/debug\n";
  EXPECT_TRUE(Contains(r.err, line)) << r.err;
}

// The symbol cache answers only for the DWARF file found now: the same command gives the same
// names whatever ran before it, says when names came from the cache, and --no-cache bypasses it.
TEST_F(SymbolizeE2eTest, TheCacheNeverAnswersOtherwiseThanTheFilesFoundNow) {
  UseProgram(WL_O2);
  const std::string unstripped = UnstrippedBinaries();
  const std::string cache = dir_ / "cache";
  std::string profile = RunProfiled(dir_ / "profiles");
  auto copy = [&](const std::string& name) {
    std::string path = dir_ / name;
    fs::copy_file(profile, path, fs::copy_options::overwrite_existing);
    return path;
  };
  // Stripped only, then with its unstripped build: the second finds the names.
  std::string a1 = copy("a1.pb.gz"), a2 = copy("a2.pb.gz");
  EXPECT_EQ(HeaprecCached({"symbolize", a1}, cache).status, 0);
  ExpectUnsymbolized(a1);
  RunResult found = HeaprecCached({"symbolize", "--binary-path", unstripped, a2}, cache);
  EXPECT_EQ(found.status, 0) << found.err;
  ExpectSymbolized(a2);
  EXPECT_FALSE(Contains(found.err, " for " + app_ + " (build id")) << found.err;

  // The other order, with the cache now holding the DWARF's answers: without the unstripped
  // build, nothing is named (as without a cache), and with it the names say where they came from.
  std::string b1 = copy("b1.pb.gz"), b2 = copy("b2.pb.gz"), b3 = copy("b3.pb.gz");
  RunResult stripped = HeaprecCached({"symbolize", b1}, cache);
  EXPECT_EQ(stripped.status, 0) << stripped.err;
  ExpectUnsymbolized(b1);
  EXPECT_TRUE(Contains(stripped.err, "no debug info for " + app_)) << stripped.err;
  RunResult cached = HeaprecCached({"symbolize", "--binary-path", unstripped, b2}, cache);
  EXPECT_EQ(cached.status, 0) << cached.err;
  ExpectSymbolized(b2);
  EXPECT_TRUE(Contains(cached.err, " for " + app_ + " (build id " + BuildIdOf(profile) +
                                       ") from the symbol cache " + cache + "/"))
      << cached.err;
  EXPECT_TRUE(Contains(cached.err, "kept from the DWARF of " + unstripped + "/wl_stripped"))
      << cached.err;
  RunResult bypassed =
      HeaprecCached({"symbolize", "--no-cache", "--binary-path", unstripped, b3}, cache);
  EXPECT_EQ(bypassed.status, 0) << bypassed.err;
  ExpectSymbolized(b3);
  EXPECT_FALSE(Contains(bypassed.err, "symbol cache")) << bypassed.err;  // libc's neither

  // The commands that show a profile name its functions from the cache without a word of it:
  // the names are the DWARF's, and a line on every report would be noise.
  RunResult shown = HeaprecCached({"report", "--binary-path", unstripped, copy("c.pb.gz")}, cache);
  EXPECT_EQ(shown.status, 0) << shown.err;
  for (const Site& site : sites_) EXPECT_TRUE(Contains(shown.out, site.function)) << shown.out;
  EXPECT_FALSE(Contains(shown.err, "symbol cache")) << shown.err;
}

}  // namespace
}  // namespace heaprec::e2e
