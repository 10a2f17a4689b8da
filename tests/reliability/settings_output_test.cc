// Bad input and faults: every setting with a bad value (environment and heaprec run flags), an
// output directory that cannot be used, a disk that fills up or a file size limit during the final
// dump.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class SettingsTest : public ReliabilityTest {};

const std::vector<std::string> kSimple = {REL_SIMPLE, "200", "1000"};
const char* const kSimpleOut = "simple count=200 bytes=200000\n";

using EnvParam = std::tuple<std::string, std::string>;  // variable, bad value
class BadEnvironmentTest : public SettingsTest, public ::testing::WithParamInterface<EnvParam> {};

// One line on stderr naming the variable and the value; the program runs unprofiled, unchanged.
TEST_P(BadEnvironmentTest, OneLineAndTheProgramRunsUnprofiled) {
  const auto& [variable, value] = GetParam();
  RunResult plain = RunGuarded(kSimple, dir());
  RunResult run = PreloadRunGuarded(dir(), kSimple, {{variable, value}});
  EXPECT_EQ(run.status, plain.status) << Describe(run);
  EXPECT_EQ(run.out, kSimpleOut);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << Describe(run);
  EXPECT_NE(lines[0].find(variable), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("'" + value + "'"), std::string::npos) << lines[0];
  EXPECT_TRUE(ReadProfiles(dir()).files.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Settings, BadEnvironmentTest,
    ::testing::Values(
        EnvParam{"HEAPREC_SAMPLE_INTERVAL", "abc"}, EnvParam{"HEAPREC_SAMPLE_INTERVAL", "0"},
        EnvParam{"HEAPREC_SAMPLE_INTERVAL", "-4K"},
        EnvParam{"HEAPREC_SAMPLE_INTERVAL", "99999999999999999999"}, EnvParam{"HEAPREC_OUTPUT", ""},
        EnvParam{"HEAPREC_DUMP_INTERVAL", "soon"}, EnvParam{"HEAPREC_DUMP_INTERVAL", "-1"},
        EnvParam{"HEAPREC_DUMP_SIGNAL", "SIGKILL"}, EnvParam{"HEAPREC_DUMP_SIGNAL", "SIGFOO"},
        EnvParam{"HEAPREC_DUMP_SIGNAL", "99"}, EnvParam{"HEAPREC_MAX_DEPTH", "0"},
        EnvParam{"HEAPREC_MAX_DEPTH", "5000"}, EnvParam{"HEAPREC_MAX_DEPTH", "ten"},
        EnvParam{"HEAPREC_UNWIND", "magic"}, EnvParam{"HEAPREC_NO_FOLLOW", "maybe"},
        EnvParam{"HEAPREC_SEED", "x1"}, EnvParam{"HEAPREC_SEED", "-1"},
        // Format directives in a bad value are printed literally.
        EnvParam{"HEAPREC_SAMPLE_INTERVAL", "%n%s%x%p"}),
    [](const ::testing::TestParamInfo<EnvParam>& info) {
      std::string name = std::get<0>(info.param).substr(8) + "_" + std::to_string(info.index);
      return name;
    });

using FlagParam = std::tuple<std::string, std::string>;  // flag, bad value
class BadFlagTest : public SettingsTest, public ::testing::WithParamInterface<FlagParam> {};

// Exit status 2 and one line naming the flag; the program does not run.
TEST_P(BadFlagTest, ExitTwoAndOneLine) {
  const auto& [flag, value] = GetParam();
  RunResult run =
      RunGuarded({HEAPREC_BIN, "run", flag, value, "--", REL_SIMPLE, "200", "1000"}, dir());
  EXPECT_EQ(run.status, 2) << Describe(run);
  EXPECT_EQ(run.out, "") << "the program ran";
  std::vector<std::string> lines = Lines(run.err);
  EXPECT_EQ(lines.size(), 1u) << Describe(run);
  // The line names the flag (--output may be named by its short form -o).
  EXPECT_TRUE(run.err.find(flag) != std::string::npos ||
              (flag == "--output" && run.err.find("-o '") != std::string::npos))
      << Describe(run);
  EXPECT_TRUE(ReadProfiles(dir()).files.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Flags, BadFlagTest,
    ::testing::Values(FlagParam{"--sample-interval", "abc"}, FlagParam{"--sample-interval", "0"},
                      FlagParam{"--dump-interval", "soon"}, FlagParam{"--dump-signal", "SIGKILL"},
                      FlagParam{"--dump-signal", "SIGFOO"}, FlagParam{"--max-depth", "0"},
                      FlagParam{"--max-depth", "5000"}, FlagParam{"--max-depth", "ten"},
                      FlagParam{"--unwind", "magic"}, FlagParam{"--seed", "x1"},
                      FlagParam{"--top", "many"}, FlagParam{"--output", ""},
                      FlagParam{"--output", "/proc/version/p.pb.gz"}),
    [](const ::testing::TestParamInfo<FlagParam>& info) {
      std::string name = std::get<0>(info.param).substr(2) + "_" + std::to_string(info.index);
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

// The program's arguments reach it exactly as given, with or without "--" before the program (the
// documented form is `heaprec run [OPTIONS] [--] PROGRAM [ARGS...]`), including arguments that
// look like options, brackets, braces, commas, spaces and empty strings.
TEST_F(SettingsTest, ArgumentsReachTheProgramVerbatim) {
  const std::vector<std::string> program = {"/usr/bin/printf", "<%s>\\n", "[%s]",     "a,b",
                                            "[x,y]",           "{k}",     "--",       "-o",
                                            "--top",           "",        "two words"};
  RunResult plain = RunGuarded(program, dir());
  ASSERT_EQ(plain.status, 0) << Describe(plain);
  ASSERT_EQ(plain.out, "<[%s]>\n<a,b>\n<[x,y]>\n<{k}>\n<-->\n<-o>\n<--top>\n<>\n<two words>\n");
  for (bool separator : {true, false}) {
    SCOPED_TRACE(separator ? "with --" : "without --");
    std::vector<std::string> argv = {HEAPREC_BIN, "run", "--top", "0", "-o", dir() + "/p.%p.pb.gz"};
    if (separator) argv.push_back("--");
    argv.insert(argv.end(), program.begin(), program.end());
    RunResult run = RunGuarded(argv, dir());
    EXPECT_EQ(run.status, 0) << Describe(run);
    EXPECT_EQ(run.out, plain.out);
  }
}

// Root passes every permission check, so "not writable" is tested with a parent that is a
// regular file (ENOTDIR), which stops root too.
TEST_F(SettingsTest, OutputParentIsARegularFile) {
  const std::string file = dir() + "/plainfile";
  { std::ofstream(file) << "x"; }
  RunResult run = RunGuarded(
      {HEAPREC_BIN, "run", "-o", file + "/p.%p.pb.gz", "--", REL_SIMPLE, "200", "1000"}, dir());
  EXPECT_EQ(run.status, 2) << Describe(run);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(Lines(run.err).size(), 1u) << Describe(run);
  EXPECT_NE(run.err.find(file), std::string::npos) << Describe(run);

  RunResult preloaded = PreloadRunGuarded(dir(), kSimple, {{"HEAPREC_OUTPUT", file + "/p.pb.gz"}});
  EXPECT_EQ(preloaded.status, 0) << Describe(preloaded);
  EXPECT_EQ(preloaded.out, kSimpleOut);
  ASSERT_EQ(Lines(preloaded.err).size(), 1u) << Describe(preloaded);
  EXPECT_NE(preloaded.err.find(file), std::string::npos) << Describe(preloaded);
  EXPECT_TRUE(ReadProfiles(dir()).files.empty());
}

// A directory with mode 0500, for a process that is not root (root would write there anyway):
// the program runs as `nobody` with the library preloaded, started by a shell that switched users
// before heaprec was there (a shell without the library), so nothing prepared a place for it: one
// clear line, profiling off, nothing written.
TEST_F(SettingsTest, OutputDirectoryNotWritableForTheUser) {
  chmod(dir().c_str(), 0755);
  const std::string readonly = dir() + "/readonly";
  std::filesystem::create_directory(readonly);
  chmod(readonly.c_str(), 0500);
  chown(readonly.c_str(), 65534, 65534);  // nobody's own directory, still mode 0500
  auto as_nobody = [&](const std::string& preload) -> std::vector<std::string> {
    return {"/usr/bin/setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--",
            "/bin/sh",
            "-c",
            preload + "exec " REL_SIMPLE " 200 1000"};
  };
  RunResult plain = RunGuarded(as_nobody(""), dir());
  ASSERT_EQ(plain.status, 0) << Describe(plain);
  RunResult run = RunGuarded(
      as_nobody("LD_PRELOAD=" HEAPREC_LIB " HEAPREC_OUTPUT=" + readonly + "/p.%p.pb.gz "), dir());
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, kSimpleOut);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << Describe(run);
  EXPECT_NE(lines[0].find(readonly), std::string::npos) << lines[0];
  EXPECT_TRUE(std::filesystem::is_empty(readonly));
}

// The same switch made under heaprec (setpriv itself loads the library and drops privileges
// before it execs the program): setpriv prepares heaprec-uid65534/ for the new user, and the
// program's profile lands there, silently.
TEST_F(SettingsTest, OutputDirectoryNotWritableAfterADropUnderHeaprec) {
  chmod(dir().c_str(), 0755);
  const std::string readonly = dir() + "/readonly";
  std::filesystem::create_directory(readonly);
  chmod(readonly.c_str(), 0500);
  chown(readonly.c_str(), 65534, 65534);
  std::vector<std::string> program = {"/usr/bin/setpriv",
                                      "--reuid=nobody",
                                      "--regid=nogroup",
                                      "--clear-groups",
                                      "--",
                                      REL_SIMPLE,
                                      "200",
                                      "1000"};
  RunResult run = RunGuarded(program, dir(),
                             {{"LD_PRELOAD", HEAPREC_LIB},
                              {"HEAPREC_SAMPLE_INTERVAL", "1"},
                              {"HEAPREC_OUTPUT", readonly + "/p.%p.pb.gz"}});
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, kSimpleOut);
  EXPECT_EQ(run.err, "");
  ProfileSet profiles = ReadProfiles(readonly + "/heaprec-uid65534");
  ASSERT_EQ(profiles.final_profiles.size(), 1u);
  EXPECT_EQ(profiles.files[profiles.final_profiles.begin()->second].reason, "exit");
}

// A disk that fills up during the final dump (a 64 KiB tmpfs and a profile larger than that):
// one clear line on stderr, no partial profile and no temporary file left (only the smaller peak
// profile, complete), program unaffected.
TEST_F(SettingsTest, DiskFullDuringTheFinalDump) {
  const std::string full = dir() + "/full";
  std::filesystem::create_directory(full);
  if (mount("tmpfs", full.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (" << strerror(errno)
                 << "); FileSizeLimitDuringTheFinalDump covers the write failure";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{full};
  // 16,000 distinct sizes in exact mode: one sample each, a profile larger than the tmpfs (about
  // 105 KB; 8,000 made 81 KB with precise allocation times, 54 KB with coarse ones, whose ages
  // compress better).
  const std::vector<std::string> program = {REL_SIMPLE, "16000", "16", "--spread", "16000"};
  RunResult plain = RunGuarded(program, dir());
  ASSERT_EQ(plain.status, 0);
  RunResult run =
      RunGuarded({HEAPREC_BIN, "run", "--sample-interval", "1", "-o", full + "/p.%p.pb.gz", "--",
                  REL_SIMPLE, "16000", "16", "--spread", "16000"},
                 dir());
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, plain.out);
  EXPECT_NE(run.err.find("could not write profile"), std::string::npos) << Describe(run);
  EXPECT_NE(run.err.find(strerror(ENOSPC)), std::string::npos) << Describe(run);
  // Only complete profiles may be there: the peak profile, written while the program ran (it is
  // smaller than the final one); ReadProfiles fails on a temporary or unreadable file.
  ProfileSet left = ReadProfiles(full);
  EXPECT_TRUE(left.files.empty()) << "a final profile was written to a full disk";
  // The library alone says the same, one line per profile it could not write.
  RunResult preloaded = RunGuarded(program, dir(),
                                   {{"LD_PRELOAD", HEAPREC_LIB},
                                    {"HEAPREC_SAMPLE_INTERVAL", "1"},
                                    {"HEAPREC_OUTPUT", full + "/p.%p.pb.gz"}});
  EXPECT_EQ(preloaded.status, 0) << Describe(preloaded);
  EXPECT_EQ(preloaded.out, plain.out);
  EXPECT_GE(Lines(preloaded.err).size(), 1u) << Describe(preloaded);
  for (const std::string& line : Lines(preloaded.err)) {
    EXPECT_NE(line.find("could not write profile"), std::string::npos) << line;
  }
  EXPECT_TRUE(ReadProfiles(full).files.empty());
}

// The same write failure through RLIMIT_FSIZE (the program sets it, ignoring SIGXFSZ, just before
// it exits): EFBIG, one line, no file at all.
TEST_F(SettingsTest, FileSizeLimitDuringTheFinalDump) {
  const std::vector<std::string> program = {REL_SIMPLE, "4000",    "16",  "--spread",
                                            "4000",     "--fsize", "4096"};
  std::filesystem::create_directory(dir() + "/plain");
  RunResult plain = RunGuarded(program, dir() + "/plain");
  ASSERT_EQ(plain.status, 0) << Describe(plain);
  RunResult run = PreloadRunGuarded(dir(), program, {{"HEAPREC_SAMPLE_INTERVAL", "1"}});
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, plain.out);
  // One line per profile it could not write (the exit profile, and any other written at exit).
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_GE(lines.size(), 1u) << Describe(run);
  for (const std::string& line : lines) {
    EXPECT_NE(line.find("could not write profile"), std::string::npos) << line;
    EXPECT_NE(line.find(strerror(EFBIG)), std::string::npos) << line;
  }
  ProfileSet profiles = ReadProfiles(dir());  // also fails on a left-over *.tmp.* file
  EXPECT_TRUE(profiles.files.empty());
}

}  // namespace
}  // namespace heaprec::reliability
