// The environment `heaprec run` gives the program (run_environment.h): native (LD_PRELOAD) and Ruby
// (RUBYLIB, RUBYOPT) modes, existing values kept, the options each mode accepts, and where the
// Ruby library is found.
#include "cli/run_environment.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "preload/control/settings.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;

using Variables = std::map<std::string, std::string>;

// RunEnvironment with `current` as the environment it extends; also checks that no variable is
// set twice.
Variables Environment(const RunOptions& o, const std::string& library, const Variables& current) {
  EnvironmentChanges changes =
      RunEnvironment(o, library, "/tmp/manifest", [&](const char* name) -> const char* {
        auto it = current.find(name);
        return it == current.end() ? nullptr : it->second.c_str();
      });
  Variables set;
  for (const auto& [name, value] : changes) {
    EXPECT_TRUE(set.emplace(name, value).second) << name << " set twice";
  }
  return set;
}

RunOptions RubyOptions() {
  RunOptions o;
  o.ruby = true;
  o.output = "/out/heaprec.%e.%p.pb.gz";
  o.settings["HEAPREC_SAMPLE_EVERY"] = "250";
  o.settings["HEAPREC_DUMP_INTERVAL"] = "0.5";
  o.settings["HEAPREC_MAX_DEPTH"] = "64";
  o.settings["HEAPREC_SEED"] = "7";
  return o;
}

TEST(RunEnvironmentTest, RubyModeLoadsAutorunThroughRubyoptAndRubylib) {
  Variables env = Environment(RubyOptions(), "/opt/heaprec/lib/ruby", {});
  EXPECT_EQ(env, (Variables{{"RUBYLIB", "/opt/heaprec/lib/ruby"},
                            {"RUBYOPT", "-rheaprec/autorun"},
                            {"HEAPREC_OUTPUT", "/out/heaprec.%e.%p.pb.gz"},
                            {"HEAPREC_MANIFEST", "/tmp/manifest"},
                            {"HEAPREC_SAMPLE_EVERY", "250"},
                            {"HEAPREC_DUMP_INTERVAL", "0.5"},
                            {"HEAPREC_MAX_DEPTH", "64"},
                            {"HEAPREC_SEED", "7"}}));
  // Without the native library nothing is preloaded, whatever LD_PRELOAD already holds.
  env = Environment(RubyOptions(), "/lib/ruby", {{"LD_PRELOAD", "/x.so"}});
  EXPECT_EQ(env.count("LD_PRELOAD"), 0u);
}

TEST(RunEnvironmentTest, RubyModePreloadsTheLibraryInRuntimeModeForNativeBytes) {
  RunOptions o = RubyOptions();
  o.settings["HEAPREC_SAMPLE_INTERVAL"] = "64K";
  EnvironmentChanges changes = RunEnvironment(
      o, "/lib/ruby", "/tmp/manifest",
      [](const char* name) -> const char* {
        return std::string(name) == "LD_PRELOAD" ? "/x.so" : nullptr;
      },
      "/opt/heaprec/lib/libheaprec.so");
  Variables env(changes.begin(), changes.end());
  EXPECT_EQ(env["LD_PRELOAD"], "/opt/heaprec/lib/libheaprec.so:/x.so");
  EXPECT_EQ(env["HEAPREC_RUNTIME"], "ruby");
  EXPECT_EQ(env["HEAPREC_SAMPLE_INTERVAL"], "64K");
  EXPECT_EQ(env["RUBYOPT"], "-rheaprec/autorun");
}

TEST(RunEnvironmentTest, RubyModeKeepsExistingRubylibAndRubyopt) {
  Variables env =
      Environment(RubyOptions(), "/lib/ruby",
                  {{"RUBYLIB", "/app/lib:/vendor"}, {"RUBYOPT", "-W0 -rbundler/setup"}});
  EXPECT_EQ(env["RUBYLIB"], "/lib/ruby:/app/lib:/vendor");
  EXPECT_EQ(env["RUBYOPT"], "-rheaprec/autorun -W0 -rbundler/setup");
  // Set but empty: nothing to keep.
  env = Environment(RubyOptions(), "/lib/ruby", {{"RUBYLIB", ""}, {"RUBYOPT", ""}});
  EXPECT_EQ(env["RUBYLIB"], "/lib/ruby");
  EXPECT_EQ(env["RUBYOPT"], "-rheaprec/autorun");
}

TEST(RunEnvironmentTest, NativeModeIsUnchanged) {
  RunOptions o;
  o.output = "relative/heap.pb.gz";
  o.settings["HEAPREC_SAMPLE_INTERVAL"] = "1";
  o.settings["HEAPREC_UNWIND"] = "fp";
  o.settings["HEAPREC_DUMP_SIGNAL"] = "USR2";
  Variables env = Environment(o, "/lib/libheaprec.so", {{"LD_PRELOAD", "/other.so"}});
  EXPECT_EQ(env, (Variables{{"LD_PRELOAD", "/lib/libheaprec.so:/other.so"},
                            {"HEAPREC_OUTPUT",
                             (std::filesystem::current_path() / "relative/heap.pb.gz").string()},
                            {"HEAPREC_MANIFEST", "/tmp/manifest"},
                            {"HEAPREC_SAMPLE_INTERVAL", "1"},
                            {"HEAPREC_DUMP_SIGNAL", "USR2"},
                            {"HEAPREC_UNWIND", "fp"}}));
}

TEST(RunEnvironmentTest, HttpPassesItsAddressAndPublicFlag) {
  RunOptions o;
  o.output = "/out/heap.pb.gz";
  o.settings["HEAPREC_HTTP"] = "0.0.0.0:6060";
  o.settings["HEAPREC_HTTP_PUBLIC"] = "1";
  Variables env = Environment(o, "/lib/libheaprec.so", {});
  EXPECT_EQ(env["HEAPREC_HTTP"], "0.0.0.0:6060");
  EXPECT_EQ(env["HEAPREC_HTTP_PUBLIC"], "1");
  o.settings.erase("HEAPREC_HTTP_PUBLIC");
  env = Environment(o, "/lib/libheaprec.so", {});
  EXPECT_EQ(env.count("HEAPREC_HTTP_PUBLIC"), 0u);
  o.settings.erase("HEAPREC_HTTP");
  EXPECT_EQ(Environment(o, "/lib/libheaprec.so", {}).count("HEAPREC_HTTP"), 0u);
  EXPECT_EQ(CheckRunMode(o), "");
  o.settings["HEAPREC_HTTP_PUBLIC"] = "1";
  EXPECT_EQ(CheckRunMode(o), "--http-public goes with --http ADDR");
}

TEST(RunEnvironmentTest, EachModeRejectsTheOthersOptions) {
  EXPECT_EQ(CheckRunMode(RubyOptions()), "");
  RunOptions native;
  native.settings["HEAPREC_SAMPLE_INTERVAL"] = "1";
  EXPECT_EQ(CheckRunMode(native), "");

  native.settings["HEAPREC_SAMPLE_EVERY"] = "10";
  EXPECT_NE(CheckRunMode(native).find("--sample-every samples Ruby objects and needs --ruby"),
            std::string::npos);

  // With --ruby it is the interval of the native bytes behind the objects.
  RunOptions o = RubyOptions();
  o.settings["HEAPREC_SAMPLE_INTERVAL"] = "512K";
  EXPECT_EQ(CheckRunMode(o), "");
  o = RubyOptions();
  o.settings["HEAPREC_UNWIND"] = "fp";
  EXPECT_NE(CheckRunMode(o).find("--unwind"), std::string::npos);
  o = RubyOptions();
  o.settings["HEAPREC_DUMP_SIGNAL"] = "USR2";  // both front ends dump on a signal
  EXPECT_EQ(CheckRunMode(o), "");
  o = RubyOptions();
  o.settings["HEAPREC_NO_FOLLOW"] = "1";
  EXPECT_NE(CheckRunMode(o).find("--no-follow"), std::string::npos);
  o = RubyOptions();
  o.settings["HEAPREC_DORMANT"] = "1";  // both front ends wait for heaprec attach, on the signal
  EXPECT_NE(CheckRunMode(o).find("--dormant needs --dump-signal"), std::string::npos);
  o.settings["HEAPREC_DUMP_SIGNAL"] = "USR2";
  EXPECT_EQ(CheckRunMode(o), "");
  o = RubyOptions();
  o.settings["HEAPREC_HTTP"] = "6060";  // both front ends serve the profile
  EXPECT_EQ(CheckRunMode(o), "");
}

// Attach and detach arrive on the dump signal: --dormant without one could never be woken.
TEST(RunEnvironmentTest, DormantNeedsTheDumpSignalAndIsPassedOn) {
  RunOptions o;
  o.output = "/out/p.pb.gz";
  o.settings["HEAPREC_DORMANT"] = "1";
  EXPECT_NE(CheckRunMode(o).find("--dormant needs --dump-signal"), std::string::npos);
  o.settings["HEAPREC_DUMP_SIGNAL"] = "SIGUSR2";
  EXPECT_EQ(CheckRunMode(o), "");
  Variables env = Environment(o, "/lib/libheaprec.so", {});
  EXPECT_EQ(env["HEAPREC_DORMANT"], "1");
  EXPECT_EQ(env["HEAPREC_DUMP_SIGNAL"], "SIGUSR2");
  o.settings.erase("HEAPREC_DORMANT");
  EXPECT_EQ(Environment(o, "/lib/libheaprec.so", {}).count("HEAPREC_DORMANT"), 0u);
}

// `heaprec run` checks each flag with its row of the library's settings table: what the library
// would refuse, the command refuses before the program runs, naming the flag and the accepted text.
TEST(RunSettingsTest, EveryValueFlagIsCheckedByTheLibrarysParser) {
  const std::string bad = "not-a-value?";
  int checked = 0;
  for (const preload::SettingRow& row : preload::AllSettings()) {
    if (row.run_flag == nullptr || row.value_name == nullptr) continue;
    preload::Settings scratch;
    const char* detail = nullptr;
    if (row.parse(bad.c_str(), &scratch, &detail)) continue;  // paths: any text is one
    RunOptions o;
    o.output = "/tmp/heaprec.pb.gz";
    o.settings[row.variable] = bad;
    std::string expected = std::string(row.run_flag) + " '" + bad + "' is invalid: " +
                           (detail != nullptr ? detail : std::string("expected ") + row.expected);
    EXPECT_EQ(CheckRunSettings(o), expected) << row.variable;
    ++checked;
  }
  EXPECT_GE(checked, 9);  // every value flag but -o, whose row takes any text
}

// The two used to disagree: the library took DWARF and 0, `heaprec run` refused them.
TEST(RunSettingsTest, AcceptsWhatTheLibraryAccepts) {
  RunOptions o;
  o.output = "/tmp/heaprec.pb.gz";
  o.settings["HEAPREC_UNWIND"] = "DWARF";
  o.settings["HEAPREC_DUMP_ABOVE"] = "0";
  o.settings["HEAPREC_SAMPLE_INTERVAL"] = "2MiB";
  o.settings["HEAPREC_DUMP_SIGNAL"] = "sigusr2";
  EXPECT_EQ(CheckRunSettings(o), "");
  o.settings["HEAPREC_HTTP"] = "0.0.0.0:6060";
  EXPECT_NE(CheckRunSettings(o).find("is not a loopback address"), std::string::npos);
  o.settings["HEAPREC_HTTP_PUBLIC"] = "1";
  EXPECT_EQ(CheckRunSettings(o), "");
  o.output = "";
  EXPECT_EQ(CheckRunSettings(o).rfind("-o '' is invalid", 0), 0u);
}

TEST(RunEnvironmentTest, RubyLibraryIsBesideTheLibDirectoryUnlessOverridden) {
  EXPECT_EQ(RubyLibraryDirectory("/opt/heaprec/bin/heaprec", nullptr), "/opt/heaprec/lib/ruby");
  EXPECT_EQ(RubyLibraryDirectory("/opt/heaprec/bin/heaprec", ""), "/opt/heaprec/lib/ruby");
  EXPECT_EQ(RubyLibraryDirectory("/opt/heaprec/bin/heaprec", "/src/ruby/lib"), "/src/ruby/lib");
  EXPECT_EQ(RubyLibraryDirectory("/x/bin/heaprec", "rel/lib"),
            (std::filesystem::current_path() / "rel/lib").lexically_normal().string());

  std::string dir = test_support::MakeTempDir();
  EXPECT_FALSE(HasRubyAutorun(dir));
  std::filesystem::create_directories(dir + "/heaprec/autorun.rb");  // a directory is not the file
  EXPECT_FALSE(HasRubyAutorun(dir));
  std::string other = test_support::MakeTempDir();
  std::filesystem::create_directories(other + "/heaprec");
  std::ofstream(other + "/heaprec/autorun.rb") << "# autorun\n";
  EXPECT_TRUE(HasRubyAutorun(other));
}

}  // namespace
}  // namespace heaprec::cli
