// The rest of the user-visible behaviour, end to end: pprof compatibility, interval and signal
// dumps, following exec, `heaprec report`, and what bad settings do.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <regex>
#include <string>

#include "e2e_test_base.h"

namespace heaprec::e2e {
namespace {

class ToolsTest : public E2eTest {};

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

TEST_F(ToolsTest, RealPprofReadsTheProfile) {
  ASSERT_NE(std::string(HEAPREC_PPROF), "") << "pprof was not built: install golang-go and "
                                               "golang-github-google-pprof-dev";
  Profiled({"--sample-interval", "1"}, {WL_C_SITES, "200", "1000"});
  std::vector<std::string> files = Profiles();
  ASSERT_EQ(files.size(), 1u);
  RunResult pprof = RunProgram({HEAPREC_PPROF, "-top", "-nodecount=100",
                                "-sample_index=inuse_space", "-symbolize=none", files[0]},
                               dir_.path(), {{"HOME", dir_.path()}, {"PPROF_TMPDIR", dir_.path()}});
  ASSERT_EQ(pprof.status, 0) << pprof.err;
  for (const char* site :
       {"site_malloc_live", "site_calloc_live", "site_realloc_grow", "site_realloc_null",
        "site_posix_memalign", "site_aligned_alloc", "site_memalign", "site_freed_middle"}) {
    EXPECT_NE(pprof.out.find(site), std::string::npos) << site << "\n" << pprof.out;
  }
  // The exactly known site: 200 x 1000 bytes = 195.31kB, all of it flat in site_malloc_live.
  EXPECT_TRUE(std::regex_search(pprof.out, std::regex("195\\.31kB .* site_malloc_live\n")))
      << pprof.out;
  // Freed sites hold nothing live: pprof drops zero rows from -top.
  EXPECT_EQ(pprof.out.find("site_churn"), std::string::npos) << pprof.out;
  // The header's comments are three lines: what the profile is, its counters, its costs.
  EXPECT_TRUE(std::regex_search(
      pprof.out, std::regex("\nheaprec " HEAPREC_VERSION " pid=[0-9]+ reason=exit [^\n]*\n"
                            "samples=[0-9]+ [^\n]*\npeak_writes=[0-9]+ [^\n]*\nType: ")))
      << pprof.out;
  // The objects' ages read as durations (the workload runs for well under a second).
  RunResult tags =
      RunProgram({HEAPREC_PPROF, "-tags", "-sample_index=inuse_space", "-symbolize=none", files[0]},
                 dir_.path(), {{"HOME", dir_.path()}, {"PPROF_TMPDIR", dir_.path()}});
  ASSERT_EQ(tags.status, 0) << tags.err;
  std::smatch age;
  ASSERT_TRUE(
      std::regex_search(tags.out, age, std::regex(" age_ns: Total [^\n]*\n[^\n]*: ([^\n]+)\n")))
      << tags.out;
  EXPECT_TRUE(std::regex_match(age[1].str(), std::regex("[0-9.]+(ns|us|ms|s)"))) << tags.out;
  RunResult alloc = RunProgram({HEAPREC_PPROF, "-top", "-nodecount=100",
                                "-sample_index=alloc_space", "-symbolize=none", files[0]},
                               dir_.path(), {{"HOME", dir_.path()}, {"PPROF_TMPDIR", dir_.path()}});
  ASSERT_EQ(alloc.status, 0) << alloc.err;
  EXPECT_NE(alloc.out.find("site_churn"), std::string::npos) << alloc.out;
}

TEST_F(ToolsTest, DumpIntervalLeavesNumberedProfiles) {
  RunResult run = Profiled({"--sample-interval", "1", "--dump-interval", "0.2"},
                           {WL_TIMED, "periodic", "1000"});
  std::vector<std::string> files = Profiles();
  // ~1 s at one dump per 0.2 s: at least 3 interval dumps, and the final profile.
  ASSERT_GE(files.size(), 4u) << run.err;
  int64_t pid = -1, previous_live = 0;
  for (size_t i = 0; i + 1 < files.size(); ++i) {
    char expected_suffix[32];
    snprintf(expected_suffix, sizeof expected_suffix, ".%04zu.pb.gz", i + 1);
    EXPECT_NE(files[i].find(expected_suffix), std::string::npos) << files[i];
    Profile profile = ReadProfileFile(files[i]);
    EXPECT_EQ(CommentText(profile, "reason"), "interval") << files[i];
    if (pid < 0) pid = CommentValue(profile, "pid");
    EXPECT_EQ(CommentValue(profile, "pid"), pid);
    // site_periodic only ever grows (a dump may land in the middle of one of its rounds of 10).
    int64_t live = SiteValues(profile, "site_periodic").inuse_objects;
    EXPECT_GE(live, previous_live) << files[i];
    previous_live = live;
  }
  EXPECT_EQ(Basename(files.back()), "p." + std::to_string(pid) + ".pb.gz");
  Profile final_profile = ReadProfileFile(files.back());
  EXPECT_EQ(CommentText(final_profile, "reason"), "exit");
  Values final_values = SiteValues(final_profile, "site_periodic");
  EXPECT_GE(final_values.inuse_objects, previous_live);
  EXPECT_GT(final_values.inuse_objects, 0);
  EXPECT_EQ(final_values.inuse_space, final_values.inuse_objects * 1000);
  EXPECT_EQ(final_values.alloc_objects, final_values.inuse_objects);
}

TEST_F(ToolsTest, DumpSignalWritesAProfile) {
  // Without heaprec, SIGUSR2 would kill the program: no unprofiled comparison here.
  RunResult run = HeaprecRun(dir_.path(), {"--sample-interval", "1", "--dump-signal", "SIGUSR2"},
                             {WL_TIMED, "signal", std::to_string(SIGUSR2), dir_.path()});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "signalled\n");
  std::vector<std::string> files = Profiles();
  ASSERT_EQ(files.size(), 2u) << run.err;
  Profile dumped = ReadProfileFile(files[0]);
  const int64_t pid = CommentValue(dumped, "pid");
  EXPECT_EQ(Basename(files[0]), "p." + std::to_string(pid) + ".0001.pb.gz");
  EXPECT_EQ(CommentText(dumped, "reason"), "signal");
  EXPECT_EQ(SiteValues(dumped, "site_before_signal"), (Values{100, 100000, 100, 100000}));
  EXPECT_EQ(Basename(files[1]), "p." + std::to_string(pid) + ".pb.gz");
}

// wl_spawn runs `sh -c 'wl_c_sites 80 100'`, started with fork+exec, vfork+exec or posix_spawn:
// each process writes its own profile, and the grandchild's holds only its own sites.
class SpawnTest : public ToolsTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(SpawnTest, FollowsExecIntoTheGrandchild) {
  const std::string command = std::string(WL_C_SITES) + " 80 100";
  std::vector<std::string> program = {WL_SPAWN};
  if (!GetParam().empty()) program.push_back(GetParam());
  program.push_back(command);
  RunResult run = Profiled({"--sample-interval", "1"}, program);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "c-sites count=80 churn=100 live=719040\n");
  int spawn_profiles = 0, sites_profiles = 0;
  int64_t spawn_pid = -1, sites_pid = -1;
  for (const std::string& file : Profiles()) {
    Profile profile = ReadProfileFile(file);
    if (SiteValues(profile, "site_spawn_parent").inuse_objects == 100) {
      ++spawn_profiles;
      spawn_pid = CommentValue(profile, "pid");
    }
    if (SiteValues(profile, "site_malloc_live") == Values{80, 80000, 80, 80000}) {
      ++sites_profiles;
      sites_pid = CommentValue(profile, "pid");
      EXPECT_EQ(SiteValues(profile, "site_spawn_parent"), Values{}) << file;
    }
  }
  EXPECT_EQ(spawn_profiles, 1) << run.err;
  EXPECT_EQ(sites_profiles, 1) << run.err;
  EXPECT_NE(spawn_pid, sites_pid);
}

INSTANTIATE_TEST_SUITE_P(ForkVforkPosixSpawn, SpawnTest,
                         ::testing::Values("", "--vfork", "--posix-spawn"),
                         [](const ::testing::TestParamInfo<std::string>& info) -> std::string {
                           if (info.param.empty()) return "fork";
                           return info.param == "--vfork" ? "vfork" : "posix_spawn";
                         });

TEST_F(ToolsTest, NoFollowProfilesTheRootOnly) {
  const std::string command = std::string(WL_C_SITES) + " 80 100";
  RunResult run = Profiled({"--sample-interval", "1", "--no-follow"}, {WL_SPAWN, command});
  EXPECT_EQ(run.out, "c-sites count=80 churn=100 live=719040\n");  // the grandchild did run
  Profile profile = OnlyProfile();
  EXPECT_EQ(SiteValues(profile, "site_spawn_parent"), (Values{100, 100000, 100, 100000}));
  EXPECT_EQ(SiteValues(profile, "site_malloc_live"), Values{});
}

// wl_thread_exit: site_exit_thread_live holds 2/3 of the live bytes.
TEST_F(ToolsTest, ReportShowsTheDominantSiteFirst) {
  Profiled({"--sample-interval", "1"}, {WL_THREAD_EXIT, "2000"}, 3);
  std::vector<std::string> files = Profiles();
  ASSERT_EQ(files.size(), 1u);

  RunResult text = RunProgram({HEAPREC_BIN, "report", files[0]}, dir_.path());
  ASSERT_EQ(text.status, 0) << text.err;
  // The first row after the table's header names the dominant site.
  std::vector<std::string> lines = Lines(text.out);
  auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find("flat%") != std::string::npos;
  });
  ASSERT_NE(header, lines.end()) << text.out;
  auto first_row = std::next(header);
  ASSERT_NE(first_row, lines.end()) << text.out;
  EXPECT_NE(first_row->find("site_exit_thread_live"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("site_exit_main_live"), std::string::npos) << text.out;

  RunResult json = RunProgram({HEAPREC_BIN, "report", files[0], "--format", "json"}, dir_.path());
  ASSERT_EQ(json.status, 0) << json.err;
  size_t thread_site = json.out.find("\"site_exit_thread_live");
  size_t main_site = json.out.find("\"site_exit_main_live");
  ASSERT_NE(thread_site, std::string::npos) << json.out;
  ASSERT_NE(main_site, std::string::npos) << json.out;
  EXPECT_LT(thread_site, main_site) << json.out;
  // No other function may come before it.
  EXPECT_EQ(json.out.find("\"function\""), json.out.find("\"function\": \"site_exit_thread_live"))
      << json.out;
  // Its flat live bytes: 2000 x 2000.
  EXPECT_NE(json.out.find("4000000"), std::string::npos) << json.out;

  // As folded stacks: one line per stack, root first, the value last. The lines add up to the
  // report's total, and the stacks that end in the dominant site hold its 2000 x 2000 bytes.
  RunResult folded =
      RunProgram({HEAPREC_BIN, "report", files[0], "--format", "folded"}, dir_.path());
  ASSERT_EQ(folded.status, 0) << folded.err;
  std::smatch total;
  ASSERT_TRUE(std::regex_search(json.out, total, std::regex("\"total\": ([0-9]+)"))) << json.out;
  int64_t sum = 0, in_site = 0;
  for (const std::string& line : Lines(folded.out)) {
    size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    int64_t value = std::stoll(line.substr(space + 1));
    sum += value;
    const std::string leaf = ";site_exit_thread_live";
    if (space >= leaf.size() && line.compare(space - leaf.size(), leaf.size(), leaf) == 0) {
      in_site += value;
    }
  }
  EXPECT_EQ(sum, std::stoll(total[1])) << folded.out;
  EXPECT_EQ(in_site, 4000000) << folded.out;
}

TEST_F(ToolsTest, BadSampleIntervalInTheEnvironment) {
  const std::vector<std::string> program = {WL_C_SITES, "80", "100"};
  RunResult plain = RunProgram(program, dir_.path());
  RunResult run = RunProgram(program, dir_.path(),
                             {{"LD_PRELOAD", HEAPREC_LIB},
                              {"HEAPREC_SAMPLE_INTERVAL", "abc"},
                              {"HEAPREC_OUTPUT", dir_ / "p.%p.pb.gz"}});
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out, plain.out);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_NE(lines[0].find("HEAPREC_SAMPLE_INTERVAL"), std::string::npos) << run.err;
  EXPECT_NE(lines[0].find("abc"), std::string::npos) << run.err;
  EXPECT_TRUE(Profiles().empty());
}

TEST_F(ToolsTest, BadSampleIntervalOnTheCommandLine) {
  RunResult run = HeaprecRun(dir_.path(), {"--sample-interval", "abc"}, {WL_C_SITES, "80", "100"});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.out, "");  // the program never ran
  EXPECT_NE(run.err.find("--sample-interval"), std::string::npos) << run.err;
  EXPECT_TRUE(Profiles().empty());
}

TEST_F(ToolsTest, MissingOutputDirectoryWithThePreloadLibrary) {
  const std::vector<std::string> program = {WL_C_SITES, "80", "100"};
  RunResult plain = RunProgram(program, dir_.path());
  const std::string missing = dir_ / "no/such/dir";
  RunResult run =
      RunProgram(program, dir_.path(),
                 {{"LD_PRELOAD", HEAPREC_LIB}, {"HEAPREC_OUTPUT", missing + "/p.pb.gz"}});
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.out, plain.out);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_NE(lines[0].find(missing), std::string::npos) << run.err;
  EXPECT_TRUE(Profiles().empty());
}

TEST_F(ToolsTest, MissingOutputDirectoryWithHeaprecRun) {
  // Like any other bad flag, an output directory that cannot be written is a usage error: heaprec
  // says so in one line naming it, and does not run the program for a profile it could not keep.
  const std::string missing = dir_ / "no/such/dir";
  RunResult run =
      RunProgram({HEAPREC_BIN, "run", "-o", missing + "/p.%p.pb.gz", "--", WL_C_SITES, "80", "100"},
                 dir_.path());
  EXPECT_EQ(run.status, 2);
  EXPECT_TRUE(run.out.empty()) << run.out;
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_NE(lines[0].find(missing), std::string::npos) << run.err;
}

}  // namespace
}  // namespace heaprec::e2e
