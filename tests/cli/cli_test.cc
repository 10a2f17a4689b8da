// The heaprec executable's report and symbolize subcommands: output, exit codes and messages; the
// subcommands on a Ruby front end profile; and `heaprec run --ruby` with a stand-in for the gem's
// autorun file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "heaprec_command_fixture.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "render/output_file.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::render;

using test_support::ShellQuote;

class CliTest : public HeaprecCommandTest {
 protected:
  void SetUp() override {
    HeaprecCommandTest::SetUp();
    profile_ = WriteProfile("heap.pb.gz", test_support::MakeReportProfile());
  }

  std::string profile_;
};

TEST_F(CliTest, ReportText) {
  std::string out;
  ASSERT_EQ(Heaprec("report " + ShellQuote(profile_), &out), 0) << out;
  EXPECT_NE(out.find("Total: 5.0 MiB in 4 profile records"), std::string::npos) << out;
  EXPECT_NE(out.find("Alloc alloc.cc:41"), std::string::npos) << out;
}

TEST_F(CliTest, ReportJsonTopAndSampleIndex) {
  std::string out;
  ASSERT_EQ(
      Heaprec("report --format json --top 1 --sample-index alloc_objects " + ShellQuote(profile_),
              &out),
      0)
      << out;
  EXPECT_NE(out.find("\"sample_index\": \"alloc_objects\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"total\": 13"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"function\": \"Alloc\""), std::string::npos) << "only the top row" << out;
  EXPECT_NE(out.find("\"function\": \"0x1234\""), std::string::npos) << out;
}

TEST_F(CliTest, UnknownSampleIndexIsAUsageError) {
  std::string out;
  EXPECT_EQ(Heaprec("report --sample-index cpu " + ShellQuote(profile_), &out), 2);
  EXPECT_NE(out.find("heaprec report: unknown sample index 'cpu'; this profile has: "
                     "alloc_objects, alloc_space, inuse_objects, inuse_space"),
            std::string::npos)
      << out;
}

TEST_F(CliTest, BadFileIsAOneLineFailure) {
  std::string bad = dir_ + "/bad.pb.gz";
  FILE* f = fopen(bad.c_str(), "w");
  fputs("not a profile", f);
  fclose(f);
  for (const char* command : {"report ", "symbolize "}) {
    std::string out;
    EXPECT_EQ(Heaprec(command + ShellQuote(bad), &out), 1) << command;
    EXPECT_NE(out.find(bad + " is a text file, not a profile"), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  std::string out;
  EXPECT_EQ(Heaprec("report " + ShellQuote(dir_ + "/missing.pb.gz"), &out), 1) << out;
  EXPECT_NE(out.find("cannot open"), std::string::npos) << out;
}

// An output file in a directory that does not exist: one line naming it, exit status 2, before
// any work (the program does not run, no profile is read); the preload says it in the same words.
TEST_F(CliTest, MissingOutputDirectoryIsAOneLineUsageError) {
  const std::string missing = dir_ + "/no/such";
  struct Case {
    std::string command;
    std::string option;
  };
  for (const Case& c :
       {Case{"run -o " + ShellQuote(missing + "/p.pb.gz") + " -- /bin/echo ran", "--output"},
        Case{"flame -o " + ShellQuote(missing + "/f.html") + " " + ShellQuote(profile_),
             "--output"},
        Case{"leaks --html " + ShellQuote(missing + "/l.html") + " " + ShellQuote(profile_),
             "--html"},
        Case{"leaks --svg " + ShellQuote(missing + "/l.svg") + " " + ShellQuote(profile_),
             "--svg"}}) {
    std::string out;
    EXPECT_EQ(Heaprec(c.command, &out), 2) << c.command << "\n" << out;
    EXPECT_NE(out.find(c.option + " expects a file in an existing directory: \"" + missing +
                       "\" does not exist"),
              std::string::npos)
        << c.command << "\n"
        << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << c.command << "\n" << out;
    EXPECT_EQ(out.find("ran"), std::string::npos) << "the program ran: " << out;
  }
  std::string out;
  test_support::RunCommand("LD_PRELOAD=" + ShellQuote(HEAPREC_PRELOAD_LIBRARY) +
                               " HEAPREC_OUTPUT=" + ShellQuote(missing + "/p.pb.gz") + " /bin/true",
                           &out);
  EXPECT_EQ(out, "heaprec: HEAPREC_OUTPUT='" + missing + "/p.pb.gz' is invalid: directory '" +
                     missing + "' does not exist; profiling is off for this process\n");
}

// An output path naming a directory means the default name in it (as `cp FILE DIR` does): every
// process writes its profile there, rather than each one failing to write a file over the directory
// and leaving its heap record to be recovered as if it had been killed. So for heaprec run given an
// existing directory or a path ending in '/', and for the library preloaded by hand.
TEST_F(CliTest, AnOutputDirectoryGetsTheProfilesByTheirDefaultNames) {
  const std::string program = "/bin/sh -c '/bin/echo first; /bin/echo second'";
  auto profiles_in = [](const std::string& directory) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(directory)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  auto starts_with = [](const std::string& name, const std::string& prefix) {
    return name.rfind(prefix, 0) == 0;
  };
  for (const std::string& given : {dir_ + "/existing", dir_ + "/slash/"}) {
    std::filesystem::create_directory(dir_ + (given.back() == '/' ? "/slash" : "/existing"));
    std::string out;
    ASSERT_EQ(Heaprec("run --seed 3 -o " + ShellQuote(given) + " -- " + program, &out), 0) << out;
    EXPECT_EQ(out.find("could not write"), std::string::npos) << out;
    EXPECT_EQ(out.find("killed"), std::string::npos) << out;
    EXPECT_NE(out.find("first\nsecond\n"), std::string::npos) << out;
    std::vector<std::string> names = profiles_in(given);
    ASSERT_EQ(names.size(), 3u) << out;  // sh and two echos, each its final profile
    EXPECT_EQ(std::count_if(names.begin(), names.end(),
                            [&](const std::string& n) { return starts_with(n, "heaprec.echo."); }),
              2)
        << out;
    EXPECT_TRUE(starts_with(names.back(), "heaprec.sh.")) << names.back();
  }
  const std::string by_hand = dir_ + "/by-hand";
  std::filesystem::create_directory(by_hand);
  std::string out;
  EXPECT_EQ(test_support::RunCommand("LD_PRELOAD=" + ShellQuote(HEAPREC_PRELOAD_LIBRARY) +
                                         " HEAPREC_OUTPUT=" + ShellQuote(by_hand) + " /bin/true",
                                     &out),
            0);
  EXPECT_EQ(out, "");
  std::vector<std::string> names = profiles_in(by_hand);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_TRUE(starts_with(names[0], "heaprec.true.")) << names[0];
}

// A profile that could not be written (here: a template whose per-pid directory does not exist,
// which the library cannot check before the pid is known): the process says why, and heaprec run
// does not guess at another cause (SIGKILL, a static program).
TEST_F(CliTest, RunThatCouldNotWriteItsProfileDoesNotGuessWhy) {
  std::string out;
  ASSERT_EQ(Heaprec("run -o " + ShellQuote(dir_ + "/%p/p.pb.gz") + " -- /bin/true", &out), 0)
      << out;
  EXPECT_NE(out.find("heaprec: could not write profile '" + dir_ + "/"), std::string::npos) << out;
  EXPECT_NE(out.find("heaprec: no profile was written: 1 write failed (the processes said why "
                     "above)\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("SIGKILL"), std::string::npos) << out;
}

// A wrapper (a shell) that holds nothing while the process it starts holds the memory: the summary
// is that process's, said in one line, not the wrapper's empty profile with advice to lower the
// interval. 50 blocks of 300 KB at 512 KiB: each sampled with p = 0.44, none in 4e-13 (and the
// seed is fixed).
TEST_F(CliTest, RunSummarizesTheProcessThatHeldTheMemory) {
  const std::string child = "/usr/bin/python3 -c 'x = [bytearray(300000) for i in range(50)]'";
  std::string out;
  ASSERT_EQ(Heaprec("run --seed 5 -o " + ShellQuote(dir_ + "/p.%p.pb.gz") + " -- /bin/sh -c " +
                        ShellQuote(child + "; echo done"),
                    &out),
            0)
      << out;
  const std::string said = "held nothing sampled; pid ";
  const size_t at = out.find(said);
  ASSERT_NE(at, std::string::npos) << out;
  const std::string pid = std::to_string(std::atol(out.c_str() + at + said.size()));
  EXPECT_NE(out.find(", of the 2 processes with profiles, held the most ("), std::string::npos)
      << out;
  EXPECT_NE(out.find("Summary of pid " + pid + " "), std::string::npos) << out;
  EXPECT_NE(out.find("PyByteArray"), std::string::npos) << "the child's sites: " << out;
  EXPECT_EQ(out.find("No allocation was sampled"), std::string::npos) << out;
}

// A program that allocates far less than the sampling interval: the run says how to get samples.
TEST_F(CliTest, RunThatSampledNothingSaysHowToGetSamples) {
  std::string out;
  ASSERT_EQ(Heaprec("run --seed 7 -o " + ShellQuote(dir_ + "/p.pb.gz") + " -- /bin/echo ran", &out),
            0)
      << out;
  EXPECT_NE(out.find("No allocation was sampled"), std::string::npos) << out;
  EXPECT_NE(out.find("--sample-interval 4K"), std::string::npos) << out;
  EXPECT_EQ(out.find("Showing top"), std::string::npos) << out;
}

// A bad value in the environment (not a flag, which heaprec run checks itself): every process of
// the program turns profiling off, and heaprec run says why once, not once per process and not
// with its guess at why no profile was written. The program's output and status are its own.
TEST_F(CliTest, RunSaysABadEnvironmentSettingOnce) {
  std::string out;
  int status = test_support::RunCommand("HEAPREC_UNWIND=bogus " + ShellQuote(HEAPREC_BINARY) +
                                            " run -o " + ShellQuote(dir_ + "/q.%p.pb.gz") +
                                            " -- sh -c '/bin/echo one; /bin/echo two; exit 3'",
                                        &out);
  EXPECT_EQ(status, 3) << out;
  const std::string line =
      "heaprec: HEAPREC_UNWIND='bogus' is invalid: expected dwarf, libgcc, check or fp; profiling "
      "is off for this process\n";
  std::size_t first = out.find(line);
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_EQ(out.find(line, first + 1), std::string::npos) << out;  // three processes, one line
  EXPECT_EQ(out.find("no profile was written"), std::string::npos) << out;
  EXPECT_NE(out.find("one\ntwo\n"), std::string::npos) << out;
}

TEST_F(CliTest, SymbolizeToOutputKeepsInputAndSummarizes) {
  std::string out_path = dir_ + "/out.pb.gz";
  std::string out;
  // Three locations already have lines; the fourth is in a library that does not exist here: it
  // is named, with where it was looked for, and the status says a binary is missing.
  ASSERT_EQ(Heaprec("symbolize " + ShellQuote(profile_) + " -o " + ShellQuote(out_path), &out), 1)
      << out;
  EXPECT_EQ(out,
            "heaprec symbolize: no binary for /usr/lib/libfoo.so: looked in /usr/lib/libfoo.so\n"
            "heaprec symbolize: symbolized 3 of 4 locations in 1 profile; 1 without a binary\n");
  EXPECT_EQ(ReadProfileFile(out_path), test_support::MakeReportProfile());
  EXPECT_EQ(ReadProfileFile(profile_), test_support::MakeReportProfile());
}

TEST_F(CliTest, HelpDescribesOptions) {
  std::string out;
  EXPECT_EQ(Heaprec("report --help", &out), 0);
  EXPECT_NE(out.find("--sample-index"), std::string::npos) << out;
  EXPECT_EQ(Heaprec("symbolize --help", &out), 0);
  EXPECT_NE(out.find("--output"), std::string::npos) << out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST_F(CliTest, SubcommandsReadRubyProfiles) {
  std::string ruby = dir_ + "/ruby.pb.gz";
  WriteProfileFile(test_support::MakeRubyProfile(100), ruby);
  std::string out;
  ASSERT_EQ(Heaprec("report " + ShellQuote(ruby), &out), 0) << out;
  for (const char* expected :
       {"Total: 125.0 KiB in 4 profile records", "Sampling: 1 in 100 objects\n",
        "  <main> app.rb:7\n", "  block in Cache#fill cache.rb:12\n", "  Cache#fill cache.rb:15\n",
        "  Hash\n"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
  // A C method that only calls is not a site: not a row.
  EXPECT_EQ(out.find("Integer#times"), std::string::npos) << out;
  EXPECT_EQ(Heaprec("report --sample-index alloc_objects " + ShellQuote(ruby), &out), 2) << out;

  // Every location already has its line and there are no mappings: nothing to do, nothing lost.
  std::string copy = dir_ + "/ruby.symbolized.pb.gz";
  ASSERT_EQ(Heaprec("symbolize " + ShellQuote(ruby) + " -o " + ShellQuote(copy), &out), 0) << out;
  EXPECT_EQ(out, "heaprec symbolize: symbolized 6 of 6 locations in 1 profile\n");
  EXPECT_EQ(ReadProfileFile(copy), test_support::MakeRubyProfile(100));
  ASSERT_EQ(Heaprec("symbolize " + ShellQuote(ruby), &out), 0) << out;
  EXPECT_EQ(ReadProfileFile(ruby), test_support::MakeRubyProfile(100));

  Profile grown = test_support::MakeRubyProfile(100);
  grown.samples[1].values = {2000, 2000 * 60};
  std::string next = dir_ + "/ruby.next.pb.gz";
  WriteProfileFile(grown, next);
  ASSERT_EQ(Heaprec("diff " + ShellQuote(ruby) + " " + ShellQuote(next), &out), 0) << out;
  EXPECT_NE(out.find("(sampled 1 in 100 objects)"), std::string::npos) << out;
  EXPECT_NE(out.find("* +105.5 KiB"), std::string::npos) << out;
  EXPECT_NE(out.find("Cache#fill cache.rb:15\n"), std::string::npos) << out;
  // A Ruby profile and a native one are not comparable.
  EXPECT_EQ(Heaprec("diff " + ShellQuote(profile_) + " " + ShellQuote(ruby), &out), 1) << out;
  EXPECT_NE(out.find("not comparable"), std::string::npos) << out;

  std::string series = dir_ + "/series";
  std::filesystem::create_directory(series);
  for (int i = 0; i < 4; ++i) {
    Profile p = test_support::MakeRubyProfile(100);
    p.samples[1].values = {5000 * (i + 1), 5000 * (i + 1) * 60};
    p.time_nanos += i * 1000000000LL;
    WriteProfileFile(p, series + "/ruby." + std::to_string(i) + ".pb.gz");
  }
  ASSERT_EQ(Heaprec("leaks " + ShellQuote(series), &out), 0) << out;
  EXPECT_NE(out.find("sampled 1 in 100 objects; 1 suspect"), std::string::npos) << out;
  EXPECT_NE(out.find("Cache#fill cache.rb:15\n"), std::string::npos) << out;
}

// `heaprec run --ruby` with HEAPREC_RUBY_LIB pointing at a stand-in heaprec/autorun.rb, loaded by
// the real ruby through RUBYLIB and RUBYOPT as the gem's would be.
class RunRubyTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    lib_ = dir_ + "/lib";
    std::filesystem::create_directories(lib_ + "/heaprec");
  }

  // The stand-in: records its environment in env.txt and, at exit, reports `profile` in the
  // manifest exactly as the gem does ("pid\treason\tpath\n").
  void WriteAutorun(const std::string& profile) {
    std::ofstream(lib_ + "/heaprec/autorun.rb")
        << "File.write(" << Quote(dir_ + "/env.txt") << ", ENV.sort.map { |k, v| \"#{k}=#{v}\\n\" "
        << "}.join)\n"
        << "at_exit { File.open(ENV['HEAPREC_MANIFEST'], 'a') { |f| "
        << "f.write(\"#{Process.pid}\\texit\\t" << profile << "\\n\") } }\n";
  }

  static std::string Quote(const std::string& s) { return "'" + s + "'"; }

  int Run(const std::string& args, std::string* output) {
    return test_support::RunCommand("HEAPREC_RUBY_LIB=" + ShellQuote(lib_) + " RUBYOPT=-W0 " +
                                        ShellQuote(HEAPREC_BINARY) + " run " + args,
                                    output);
  }

  std::string lib_;
};

TEST_F(RunRubyTest, LoadsAutorunAndReportsItsProfile) {
  std::string profile = dir_ + "/ruby.pb.gz";
  WriteProfileFile(test_support::MakeRubyProfile(100), profile);
  std::string written = ReadFile(profile);
  WriteAutorun(profile);
  std::string out;
  ASSERT_EQ(Run("--ruby --sample-every 100 --seed 3 --dump-interval 2 --max-depth 50 -o " +
                    ShellQuote(dir_ + "/out.%p.pb.gz") + " -- ruby -e 'exit 3'",
                &out),
            3)
      << out;
  std::string env = ReadFile(dir_ + "/env.txt");
  for (const std::string& expected :
       {"RUBYLIB=" + lib_ + "\n", std::string("RUBYOPT=-rheaprec/autorun -W0\n"),
        "HEAPREC_OUTPUT=" + dir_ + "/out.%p.pb.gz\n", std::string("HEAPREC_SAMPLE_EVERY=100\n"),
        std::string("HEAPREC_SEED=3\n"), std::string("HEAPREC_DUMP_INTERVAL=2\n"),
        std::string("HEAPREC_MAX_DEPTH=50\n"), std::string("HEAPREC_MANIFEST=")}) {
    EXPECT_NE(env.find(expected), std::string::npos) << expected << "\n" << env;
  }
  // libheaprec.so preloaded in runtime mode: the native bytes behind the objects.
  std::size_t preload = env.find("\nLD_PRELOAD=");
  ASSERT_NE(preload, std::string::npos) << env;
  EXPECT_NE(env.substr(preload, env.find('\n', preload + 1) - preload).find("libheaprec.so"),
            std::string::npos)
      << env;
  EXPECT_NE(env.find("HEAPREC_RUNTIME=ruby\n"), std::string::npos) << env;
  // The manifest's profile is listed and reported like a native one, and left as written: there is
  // nothing to symbolize.
  EXPECT_NE(out.find("heaprec: wrote 1 profile:\n  " + profile), std::string::npos) << out;
  EXPECT_NE(out.find("Sampling: 1 in 100 objects"), std::string::npos) << out;
  EXPECT_NE(out.find("  block in Cache#fill cache.rb:12\n"), std::string::npos) << out;
  EXPECT_EQ(ReadFile(profile), written);
}

TEST_F(RunRubyTest, OptionsOfTheOtherModeAreUsageErrors) {
  WriteAutorun(dir_ + "/none.pb.gz");
  std::string marker = dir_ + "/ran";
  std::string program = " -- sh -c " + ShellQuote("touch " + ShellQuote(marker));
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"--ruby --dump-above 1M", "heaprec run: --dump-above is for native programs"},
           {"--sample-every 10",
            "heaprec run: --sample-every samples Ruby objects and needs --ruby; native programs "
            "are sampled by bytes with --sample-interval\n"},
           {"--ruby --unwind fp", "heaprec run: --unwind is for native programs"},
           {"--ruby --sample-every 0", "heaprec run: --sample-every '0' is invalid"},
           {"--ruby --sample-every 1k", "heaprec run: --sample-every '1k' is invalid"},
       }) {
    std::string out;
    EXPECT_EQ(Run(c.args + program, &out), 2) << c.args << "\n" << out;
    EXPECT_EQ(out.rfind(c.message, 0), 0u) << c.args << "\n" << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program must not run";
}

TEST_F(RunRubyTest, MissingAutorunFailsBeforeTheProgramRuns) {
  std::string marker = dir_ + "/ran";
  std::string out;
  EXPECT_EQ(Run("--ruby -- sh -c " + ShellQuote("touch " + ShellQuote(marker)), &out), 1) << out;
  EXPECT_EQ(out, "heaprec run: --ruby: no heaprec/autorun.rb in '" + lib_ +
                     "' (from HEAPREC_RUBY_LIB)\n");
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(RunRubyTest, HelpDocumentsRubyMode) {
  std::string out;
  ASSERT_EQ(Heaprec("run --help", &out), 0);
  for (const char* expected : {"--ruby", "--sample-every", "RUBYOPT", "HEAPREC_RUBY_LIB"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << "\n" << out;
  }
}

}  // namespace
}  // namespace heaprec
