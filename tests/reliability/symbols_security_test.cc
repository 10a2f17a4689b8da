// Binaries without symbols, with separate debug files, deleted while running; and security:
// profile files mode 0600 and never written through a planted symlink, nothing done in a
// secure-exec (setuid/setgid) process, environment values never used as format strings.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class SymbolsTest : public ReliabilityTest {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir() + "/bin"); }

  // Runs a tool, failing the test if it does not succeed.
  void Tool(const std::vector<std::string>& argv) {
    RunResult r = RunGuarded(argv, dir());
    ASSERT_EQ(r.status, 0) << argv[0] << "\n" << Describe(r);
  }

  // Compiles programs/rel_simple.c to `path` with a fresh random build id, so that the debug file
  // installed for it can never be taken for another build's (or another test run's).
  std::string CompileWithUniqueBuildId(const std::string& path) {
    std::random_device random;
    char id[41];
    snprintf(id, sizeof id, "%08x%08x%08x%08x%08x", random(), random(), random(), random(),
             random());
    RunResult r = RunGuarded(
        {REL_C_COMPILER, "-O1", "-g", "-fno-omit-frame-pointer",
         std::string("-Wl,--build-id=0x") + id, REL_PROGRAMS_DIR "/rel_simple.c", "-o", path},
        dir());
    EXPECT_EQ(r.status, 0) << Describe(r);
    return id;
  }

  // heaprec run (symbolizing), then `heaprec report` of the only profile.
  std::string ProfileAndReport(const std::vector<std::string>& program) {
    RunResult run = HeaprecRunGuarded(dir(), {"--sample-interval", "1"}, program);
    EXPECT_EQ(run.status, 0) << Describe(run);
    EXPECT_EQ(run.out, "simple count=300 bytes=300000\n");
    return ReportOnlyProfile();
  }

  std::string ReportOnlyProfile() {
    ProfileSet profiles = ReadProfiles(dir());
    EXPECT_EQ(profiles.files.size(), 1u);
    if (profiles.files.empty()) return "";
    RunResult report =
        // Every frame as recorded (--all-frames): these tests are about which frames get names,
        // libc's start-up frames included, not about which is the site.
        RunGuarded({HEAPREC_BIN, "report", profiles.files[0].path, "--top", "50", "--all-frames"},
                   dir());
    EXPECT_EQ(report.status, 0) << Describe(report);
    return report.out;
  }

  // Runs `binary` under heaprec run in the background, deletes it once its heap is allocated,
  // then lets it exit. Returns the report of its profile.
  std::string ProfileWhileDeleting(const std::string& binary) {
    const std::string ready = dir() + "/ready", go = dir() + "/go";
    RunResult run;
    std::thread runner([&] {
      run = HeaprecRunGuarded(dir(), {"--sample-interval", "1"},
                              {binary, "300", "1000", "--ready", ready, "--go", go});
    });
    for (int i = 0; i < 60000 && !std::filesystem::exists(ready); ++i) usleep(10000);
    EXPECT_TRUE(std::filesystem::exists(ready)) << "the program never became ready";
    EXPECT_EQ(unlink(binary.c_str()), 0);
    { std::ofstream(go) << "go"; }
    runner.join();
    EXPECT_EQ(run.status, 0) << Describe(run);
    EXPECT_EQ(run.out, "simple count=300 bytes=300000\n");
    std::filesystem::remove(ready);
    std::filesystem::remove(go);
    return ReportOnlyProfile();
  }
};

// A debug file installed under /usr/lib/debug/.build-id for the duration of a test.
class InstalledDebugFile {
 public:
  InstalledDebugFile(const std::string& build_id, const std::string& debug_file) {
    const std::string directory = "/usr/lib/debug/.build-id/" + build_id.substr(0, 2);
    std::filesystem::create_directories(directory);
    path_ = directory + "/" + build_id.substr(2) + ".debug";
    std::filesystem::copy_file(debug_file, path_);
  }
  ~InstalledDebugFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    // The xx/ directory too, if this file was all it held (remove() leaves non-empty ones).
    std::filesystem::remove(std::filesystem::path(path_).parent_path(), ignored);
  }
  InstalledDebugFile(const InstalledDebugFile&) = delete;
  InstalledDebugFile& operator=(const InstalledDebugFile&) = delete;

 private:
  std::string path_;
};

TEST_F(SymbolsTest, StrippedBinaryReportsAddresses) {
  const std::string binary = dir() + "/bin/rel_simple";
  CompileWithUniqueBuildId(binary);
  Tool({HEAPREC_STRIP, "--strip-all", binary});
  std::string report = ProfileAndReport({binary, "300", "1000"});
  EXPECT_EQ(report.find("site_simple_keep"), std::string::npos) << report;
  EXPECT_NE(report.find("0x"), std::string::npos) << report;            // the program's own frames
  EXPECT_NE(report.find("__libc_start"), std::string::npos) << report;  // libc still named
}

TEST_F(SymbolsTest, StrippedBinaryWithDebugLinkBesideIt) {
  const std::string binary = dir() + "/bin/rel_simple";
  CompileWithUniqueBuildId(binary);
  Tool({HEAPREC_OBJCOPY, "--only-keep-debug", binary, binary + ".debug"});
  Tool({HEAPREC_STRIP, "--strip-all", binary});
  // --add-gnu-debuglink records the base name; the debug file is found beside the binary.
  RunResult link =
      RunGuarded({HEAPREC_OBJCOPY, "--add-gnu-debuglink=rel_simple.debug", binary}, dir() + "/bin");
  ASSERT_EQ(link.status, 0) << Describe(link);
  std::string report = ProfileAndReport({binary, "300", "1000"});
  EXPECT_NE(report.find("site_simple_keep"), std::string::npos) << report;
}

TEST_F(SymbolsTest, StrippedBinaryWithBuildIdDebugFile) {
  const std::string binary = dir() + "/bin/rel_simple";
  const std::string id = CompileWithUniqueBuildId(binary);
  Tool({HEAPREC_OBJCOPY, "--only-keep-debug", binary, dir() + "/rel_simple.debug"});
  Tool({HEAPREC_STRIP, "--strip-all", binary});
  InstalledDebugFile installed(id, dir() + "/rel_simple.debug");
  std::string report = ProfileAndReport({binary, "300", "1000"});
  EXPECT_NE(report.find("site_simple_keep"), std::string::npos) << report;
}

// Deleted while it runs, no debug file anywhere: the profile is still written and reported, with
// addresses for the program's frames.
TEST_F(SymbolsTest, DeletedBinary) {
  const std::string binary = dir() + "/bin/rel_simple";
  CompileWithUniqueBuildId(binary);
  std::string report = ProfileWhileDeleting(binary);
  EXPECT_EQ(report.find("site_simple_keep"), std::string::npos) << report;
  EXPECT_NE(report.find("0x"), std::string::npos) << report;
  EXPECT_NE(report.find("__libc_start"), std::string::npos) << report;
}

// Deleted while it runs, with its debug file under /usr/lib/debug/.build-id: names come back.
TEST_F(SymbolsTest, DeletedBinaryWithBuildIdDebugFile) {
  const std::string binary = dir() + "/bin/rel_simple";
  const std::string id = CompileWithUniqueBuildId(binary);
  Tool({HEAPREC_OBJCOPY, "--only-keep-debug", binary, dir() + "/rel_simple.debug"});
  InstalledDebugFile installed(id, dir() + "/rel_simple.debug");
  std::string report = ProfileWhileDeleting(binary);
  EXPECT_NE(report.find("site_simple_keep"), std::string::npos) << report;
}

class SecurityTest : public ReliabilityTest {};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

// Profiles are created mode 0600, by the library and after heaprec run rewrote them symbolized.
TEST_F(SecurityTest, ProfilesAreMode0600) {
  const mode_t old_umask = umask(0);  // the child inherits it: 0600 must come from heaprec
  RunResult run = HeaprecRunGuarded(dir(), {}, {REL_SIMPLE, "200", "1000"});
  RunResult preloaded = PreloadRunGuarded(dir(), {REL_SIMPLE, "200", "1000"},
                                          {{"HEAPREC_OUTPUT", dir() + "/lib.%p.pb.gz"}});
  umask(old_umask);
  ASSERT_EQ(run.status, 0) << Describe(run);
  ASSERT_EQ(preloaded.status, 0) << Describe(preloaded);
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 2u);
  std::vector<ProfileFile> all = profiles.files;
  all.insert(all.end(), profiles.peak_files.begin(), profiles.peak_files.end());
  for (const ProfileFile& file : all) {
    EXPECT_EQ(ModeOf(file.path) & 07777, 0600u) << file.path;
    EXPECT_TRUE(S_ISREG(ModeOf(file.path))) << file.path;
  }
}

// Symlinks planted at the final path and at the temporary paths <final>.tmp.<pid>.<n> (n counts
// the process's dumps; the first few are predictable), pointing at victim files: no victim changes,
// and the profile is a regular file of its own.
TEST_F(SecurityTest, PlantedSymlinksAreNotFollowed) {
  const std::string final_path = dir() + "/fixed.pb.gz";
  const std::string victim_final = dir() + "/victim-final", victim_tmp = dir() + "/victim-tmp";
  const std::string missing_victim = dir() + "/victim-never-created";
  { std::ofstream(victim_final) << "victim one\n"; }
  { std::ofstream(victim_tmp) << "victim two\n"; }
  const std::string ready = dir() + "/ready", go = dir() + "/go";
  RunResult run;
  std::thread runner([&] {
    run = PreloadRunGuarded(dir(), {REL_SIMPLE, "300", "1000", "--ready", ready, "--go", go},
                            {{"HEAPREC_OUTPUT", final_path}, {"HEAPREC_SAMPLE_INTERVAL", "1"}});
  });
  for (int i = 0; i < 60000 && !std::filesystem::exists(ready); ++i) usleep(10000);
  ASSERT_TRUE(std::filesystem::exists(ready));
  const std::string pid = Lines(e2e::ReadFile(ready)).at(0);
  ASSERT_EQ(symlink(victim_final.c_str(), final_path.c_str()), 0);
  for (int n = 0; n < 4; ++n) {
    std::string temporary = final_path + ".tmp." + pid + "." + std::to_string(n);
    ASSERT_EQ(symlink(victim_tmp.c_str(), temporary.c_str()), 0);
  }
  // A dangling link too, where a numbered dump of the same template would go.
  ASSERT_EQ(symlink(missing_victim.c_str(), (dir() + "/fixed.0001.pb.gz").c_str()), 0);
  { std::ofstream(go) << "go"; }
  runner.join();
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(e2e::ReadFile(victim_final), "victim one\n");
  EXPECT_EQ(e2e::ReadFile(victim_tmp), "victim two\n");
  EXPECT_FALSE(std::filesystem::exists(missing_victim));
  // The dumps replaced the links at the names they used (unlink, then O_EXCL) and renamed the
  // files away; the links at names no dump reached are removed here.
  int consumed = 0;
  for (int n = 0; n < 4; ++n) {
    std::string temporary = final_path + ".tmp." + pid + "." + std::to_string(n);
    if (std::filesystem::is_symlink(temporary)) {
      std::filesystem::remove(temporary);
    } else {
      ++consumed;
    }
  }
  EXPECT_GE(consumed, 1);
  EXPECT_TRUE(S_ISREG(ModeOf(final_path)));
  EXPECT_EQ(ModeOf(final_path) & 07777, 0600u);
  std::filesystem::remove(dir() + "/fixed.0001.pb.gz");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u);
  EXPECT_EQ(profiles.files[0].path, final_path);
  EXPECT_EQ(profiles.files[0].reason, "exit");
}

// `%n%s%x` and `../` in HEAPREC_OUTPUT are taken literally: no format-string expansion (only %p,
// %t, %e, %% are directives), and the kernel resolves `..` like in any path. A program name with
// '%' and spaces becomes a safe file name in %e.
TEST_F(SecurityTest, OutputTemplateIsExpandedLiterally) {
  std::filesystem::create_directories(dir() + "/sub");
  std::filesystem::create_directories(dir() + "/bin");
  const std::string odd = dir() + "/bin/odd%n%s name";
  CopyFile(REL_SIMPLE, odd);
  RunResult run = PreloadRunGuarded(dir(), {odd, "200", "1000", "--ready", dir() + "/ready"},
                                    {{"HEAPREC_OUTPUT", dir() + "/sub/../%n%s%x%d.%e.%p.pb.gz"}});
  ASSERT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.err, "");
  const std::string pid = Lines(e2e::ReadFile(dir() + "/ready")).at(0);
  const std::string expected = dir() + "/%n%s%x%d.odd_n_s_name." + pid + ".pb.gz";
  EXPECT_TRUE(std::filesystem::exists(expected)) << expected;
  std::vector<std::string> files;
  for (const std::string& file : e2e::ListProfiles(dir())) {
    if (file.find(".peak.") == std::string::npos) files.push_back(file);  // peak-heap profiles
  }
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], expected);
  EXPECT_TRUE(std::filesystem::is_empty(dir() + "/sub"));
}

// setuid and setgid copies of a program linked against libheaprec.so (so that the library is
// loaded even in secure-execution mode), run as nobody: the library does nothing and no profile
// is written. The same copy run by root (not secure) does write one, so the check means
// something. LD_PRELOAD with a path is ignored by ld.so for such programs; that is checked too.
class SecureExecTest : public SecurityTest, public ::testing::WithParamInterface<mode_t> {};

TEST_P(SecureExecTest, TheLibraryStaysPassive) {
  chmod(dir().c_str(), 0755);
  const std::string bin = dir() + "/bin", out = dir() + "/out";
  std::filesystem::create_directories(bin);
  std::filesystem::create_directories(out);
  chmod(out.c_str(), 0777);
  const std::string linked = bin + "/rel_linked", preloaded = bin + "/rel_simple";
  CopyFile(REL_LINKED, linked);
  CopyFile(REL_SIMPLE, preloaded);
  ASSERT_EQ(chmod(linked.c_str(), 0755 | GetParam()), 0);
  ASSERT_EQ(chmod(preloaded.c_str(), 0755 | GetParam()), 0);
  const EnvChanges env = {{"HEAPREC_OUTPUT", out + "/p.%p.pb.gz"},
                          {"HEAPREC_SAMPLE_INTERVAL", "1"}};
  const std::vector<std::string> as_nobody = {"/usr/bin/setpriv", "--reuid=nobody",
                                              "--regid=nogroup", "--clear-groups", "--"};

  // Control: root runs the linked copy; not secure-exec, so the library profiles it.
  RunResult control = RunGuarded({linked, "200", "1000"}, dir(), env);
  ASSERT_EQ(control.status, 0) << Describe(control);
  ASSERT_EQ(ReadProfiles(out).files.size(), 1u) << "the linked program does not load heaprec";
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  chmod(out.c_str(), 0777);

  std::vector<std::string> argv = as_nobody;
  argv.insert(argv.end(), {linked, "200", "1000"});
  RunResult run = RunGuarded(argv, dir(), env);
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, "simple count=200 bytes=200000\n");
  EXPECT_EQ(run.err, "");
  EXPECT_TRUE(std::filesystem::is_empty(out)) << "a secure-exec process wrote a profile";

  argv = as_nobody;
  argv.insert(argv.end(), {preloaded, "200", "1000"});
  EnvChanges with_preload = env;
  with_preload["LD_PRELOAD"] = HEAPREC_LIB;
  run = RunGuarded(argv, dir(), with_preload);
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, "simple count=200 bytes=200000\n");
  EXPECT_TRUE(std::filesystem::is_empty(out)) << "a secure-exec process wrote a profile";
}

INSTANTIATE_TEST_SUITE_P(Modes, SecureExecTest, ::testing::Values(S_ISUID, S_ISGID),
                         [](const ::testing::TestParamInfo<mode_t>& info) {
                           return std::string(info.param == S_ISUID ? "setuid" : "setgid");
                         });

}  // namespace
}  // namespace heaprec::reliability
