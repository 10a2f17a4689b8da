// Real programs under heaprec: python3, perl, ruby, git, sqlite3, cmake, g++. Each must print the
// same stdout and exit with the same status as without heaprec, and every process it starts must
// leave a valid profile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class RealProgramsTest : public ReliabilityTest {
 protected:
  // Runs `argv` in a fresh <dir>/plain/work and <dir>/prof/work (each prepared by `setup`),
  // unprofiled and under `heaprec run` (profiles to <dir>/prof/profiles). stdout is compared after
  // replacing each run's work directory by "@WORK". Returns the number of exit profiles, all of
  // which are checked to be valid.
  size_t Compare(const std::vector<std::string>& argv, const EnvChanges& env = {},
                 const std::function<void(const std::string&)>& setup = {},
                 const std::vector<std::string>& flags = {"--no-symbolize"}) {
    const std::string plain = dir() + "/plain/work", prof = dir() + "/prof/work",
                      profiles = dir() + "/prof/profiles";
    for (const std::string& d : {plain, prof, profiles}) std::filesystem::create_directories(d);
    if (setup) {
      setup(plain);
      setup(prof);
    }
    // The command line goes into a script run as `sh run.sh`, which execs the program: heaprec run
    // then passes no argument of the program's own (see
    // SettingsTest.ArgumentsReachTheProgramVerbatim for how heaprec run handles arguments), and the
    // program is still the process it profiles.
    std::string script = "exec";
    for (const std::string& arg : argv) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      script += " " + quoted + "'";
    }
    Write(plain + "/run.sh", script + "\n");
    Write(prof + "/run.sh", script + "\n");
    EnvChanges plain_env = env, prof_env = env;
    plain_env["HOME"] = plain;
    prof_env["HOME"] = prof;
    RunResult a = RunGuarded({"/bin/sh", "run.sh"}, plain, plain_env);
    std::vector<std::string> heaprec = {HEAPREC_BIN, "run", "-o", profiles + "/p.%p.pb.gz"};
    heaprec.insert(heaprec.end(), flags.begin(), flags.end());
    heaprec.insert(heaprec.end(), {"--", "/bin/sh", "run.sh"});
    RunResult b = RunGuarded(heaprec, prof, prof_env);
    EXPECT_NE(a.status, kHung) << Describe(a);
    EXPECT_NE(b.status, kHung) << Describe(b);
    EXPECT_EQ(a.status, 0) << "unprofiled\n" << Describe(a);
    EXPECT_EQ(b.status, a.status) << "profiled\n" << Describe(b);
    EXPECT_EQ(Normalize(b.out, prof), Normalize(a.out, plain));
    EXPECT_FALSE(a.out.empty() && argv[0].find("g++") == std::string::npos)
        << "no output to compare";
    ProfileSet set = ReadProfiles(profiles);
    EXPECT_GE(set.exit_profiles.size(), 1u) << Describe(b);
    // One final profile per process (exit, or _exit for forked children and shells), nothing else.
    EXPECT_EQ(set.final_profiles.size(), set.files.size());
    // heaprec run lists the files it found in the manifest.
    EXPECT_NE(b.err.find("heaprec: wrote "), std::string::npos) << Describe(b);
    return set.exit_profiles.size();
  }

  static std::string Normalize(std::string text, const std::string& work) {
    for (size_t at; (at = text.find(work)) != std::string::npos;)
      text.replace(at, work.size(), "@WORK");
    return text;
  }

  static void Write(const std::string& path, const std::string& content) {
    std::ofstream(path) << content;
  }
};

TEST_F(RealProgramsTest, Python3) {
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/python3")) << "install the Debian package python3";
  size_t n = Compare({"/usr/bin/python3", "-c",
                      "import json, collections\n"
                      "d = {str(i): list(range(i % 50)) for i in range(20000)}\n"
                      "c = collections.Counter(len(v) for v in d.values())\n"
                      "print(len(json.dumps(d)), sorted(c.items())[:3])\n"},
                     {}, {}, {});  // symbolized, as a user would see it
  EXPECT_EQ(n, 1u);
}

TEST_F(RealProgramsTest, Perl) {
  size_t n = Compare({"/usr/bin/perl", "-e",
                      "my %h; $h{$_} = [1 .. ($_ % 30)] for 1 .. 20000; my $t = 0; "
                      "$t += scalar(@{$h{$_}}) for keys %h; print \"$t\\n\";"});
  EXPECT_EQ(n, 1u);
}

TEST_F(RealProgramsTest, Ruby) {
  ASSERT_EQ(access("/usr/bin/ruby", X_OK), 0)
      << "ruby is not installed: install the Debian package 'ruby' (scripts/install-deps.sh)";
  size_t n = Compare({"/usr/bin/ruby", "-e",
                      "h = {}; 20000.times { |i| h[i.to_s] = Array.new(i % 40) { |j| j.to_s } }; "
                      "puts h.values.map(&:size).sum"});
  EXPECT_EQ(n, 1u);
}

TEST_F(RealProgramsTest, Sqlite3) {
  size_t n =
      Compare({"/usr/bin/sqlite3", "db.sqlite",
               "create table t(a integer, b text);"
               "with recursive n(x) as (select 1 union all select x + 1 from n where x < 20000)"
               " insert into t select x, printf('row %08d', x) from n;"
               "create index ta on t(b);"
               "select count(*), sum(a), max(b) from t where a % 7 = 3;"});
  EXPECT_EQ(n, 1u);
}

// git init, add, commit and log in a fresh repository, with fixed identities and dates so that
// the commit id is the same in both runs. Several git processes, each with its own profile.
TEST_F(RealProgramsTest, Git) {
  EnvChanges env = {{"GIT_AUTHOR_NAME", "A"},
                    {"GIT_AUTHOR_EMAIL", "a@example.com"},
                    {"GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z"},
                    {"GIT_COMMITTER_NAME", "C"},
                    {"GIT_COMMITTER_EMAIL", "c@example.com"},
                    {"GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z"},
                    {"GIT_CONFIG_NOSYSTEM", "1"},
                    {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  auto setup = [](const std::string& work) {
    std::filesystem::create_directories(work + "/repo");
    for (int i = 0; i < 20; ++i) {
      Write(work + "/repo/file" + std::to_string(i) + ".txt",
            std::string(static_cast<size_t>(100 * (i + 1)), static_cast<char>('a' + i)) + "\n");
    }
  };
  size_t n = Compare({"/bin/sh", "-c",
                      "cd repo && git -c init.defaultBranch=main init -q . && git add . && "
                      "git commit -q -m first && git log --stat && git rev-parse HEAD"},
                     env, setup);
  EXPECT_GE(n, 5u);  // sh, git init, git add, git commit, git log, git rev-parse (and helpers)
}

TEST_F(RealProgramsTest, CMakeConfigure) {
  auto setup = [](const std::string& work) {
    std::filesystem::create_directories(work + "/src");
    Write(work + "/src/CMakeLists.txt",
          "cmake_minimum_required(VERSION 3.13)\nproject(tiny C)\n"
          "add_executable(tiny main.c)\nmessage(STATUS \"tiny: ${CMAKE_C_COMPILER_ID}\")\n");
    Write(work + "/src/main.c", "int main(void) { return 0; }\n");
  };
  size_t n = Compare({"/usr/bin/cmake", "-S", "src", "-B", "build", "-G", "Ninja"}, {}, setup);
  EXPECT_GE(n, 3u);  // cmake and the compilers it tries
}

TEST_F(RealProgramsTest, CxxCompiler) {
  auto setup = [](const std::string& work) {
    Write(work + "/small.cc",
          "#include <map>\n#include <string>\n#include <vector>\n"
          "std::map<std::string, std::vector<int>> Build(int n) {\n"
          "  std::map<std::string, std::vector<int>> m;\n"
          "  for (int i = 0; i < n; ++i) m[std::to_string(i)].push_back(i);\n"
          "  return m;\n}\n");
  };
  size_t n = Compare({"/usr/bin/g++", "-O2", "-c", "small.cc", "-o", "small.o"}, {}, setup);
  EXPECT_GE(n, 3u);  // g++, cc1plus, as
  EXPECT_TRUE(std::filesystem::exists(dir() + "/prof/work/small.o"));
  EXPECT_EQ(e2e::ReadFile(dir() + "/prof/work/small.o").size(),
            e2e::ReadFile(dir() + "/plain/work/small.o").size());
}

}  // namespace
}  // namespace heaprec::reliability
