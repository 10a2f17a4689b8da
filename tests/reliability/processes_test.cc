// Process creation: fork storms, fork while other threads are inside malloc/free, fork while dumps
// are in progress, exec chains through `sh -c` (fork+exec, vfork+exec, posix_spawn), --no-follow.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class ProcessesTest : public ReliabilityTest {};

// 200 children in batches of 50, every 4th forking a grandchild: 251 processes, each writes its
// exit profile (exact mode, so every allocation goes through the recorder's locks).
TEST_F(ProcessesTest, ForkStormWritesOneProfilePerProcess) {
  RunResult run =
      CompareWithHeaprec({"--sample-interval", "1", "--no-symbolize"}, {REL_PROCS, "storm", "200"});
  EXPECT_EQ(run.out, "storm children=200 grandchildren=50 ok=200\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.exit_profiles.size(), 251u);
  EXPECT_EQ(profiles.Count("exit"), 251);
  EXPECT_EQ(profiles.files.size(), 251u);
  EXPECT_NE(run.err.find("heaprec: wrote "), std::string::npos) << Describe(run);
}

// Four threads churn malloc/realloc/free without pause while main forks 100 children one after
// another: each child allocates and exits normally, so no lock is inherited held.
TEST_F(ProcessesTest, ForkWhileOtherThreadsAreInsideMalloc) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1", "--no-symbolize"},
                                     {REL_PROCS, "threads", "100"});
  EXPECT_EQ(run.out, "threads forks=100 ok=100\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.exit_profiles.size(), 101u);
}

// The same at the default interval: the sampled slow path is rare, the fast path is everything.
TEST_F(ProcessesTest, ForkWhileOtherThreadsAreInsideMallocDefaultInterval) {
  RunResult run = CompareWithHeaprec({"--no-symbolize"}, {REL_PROCS, "threads", "100"});
  EXPECT_EQ(run.out, "threads forks=100 ok=100\n");
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 101u);
}

// Interval dumps every 10 ms while the program forks in a loop: forks land while a dump holds the
// dump lock. Interval dumps are the parent's only (the dump thread is not copied by fork).
TEST_F(ProcessesTest, ForkWhileADumpIsInProgress) {
  RunResult run =
      CompareWithHeaprec({"--sample-interval", "1", "--dump-interval", "0.01", "--no-symbolize"},
                         {REL_PROCS, "loop", "100"});
  EXPECT_EQ(run.out, "loop forks=100 ok=100\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.exit_profiles.size(), 101u);
  EXPECT_GE(profiles.Count("interval"), 1) << Describe(run);
  // A forked child starts its own dump thread, so children that live long enough write interval
  // dumps too, each under its own pid (ReadProfiles checks the names) and each beside its own
  // exit profile.
  std::set<int64_t> interval_pids;
  for (const ProfileFile& file : profiles.files) {
    if (file.reason == "interval") interval_pids.insert(file.pid);
  }
  for (int64_t pid : interval_pids) EXPECT_EQ(profiles.exit_profiles.count(pid), 1u);
}

// A parent and its forked workers (a preforking server's shape), exact mode: each process's
// alloc_* count its own allocations only, so the profiles merged count each allocation once; the
// parent's blocks stay live in every worker (inherited), and are allocated in the parent alone.
TEST_F(ProcessesTest, ForkedWorkersCountOnlyTheirOwnAllocations) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {REL_PROCS, "pool", "3"});
  EXPECT_EQ(run.out, "pool workers=3 ok=3\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.exit_profiles.size(), 4u) << Describe(run);
  int workers = 0;
  for (const auto& [pid, index] : profiles.exit_profiles) {
    const Profile& p = profiles.files[index].profile;
    const e2e::Values parent_site = e2e::SiteValues(p, "site_pool_parent");
    const e2e::Values worker_site = e2e::SiteValues(p, "site_pool_worker");
    EXPECT_EQ(parent_site.inuse_objects, 1001) << "pid " << pid;  // 1000 blocks and their array
    if (worker_site.alloc_objects == 0) {                         // the parent
      EXPECT_EQ(parent_site.alloc_objects, 1001) << "pid " << pid;
      continue;
    }
    ++workers;
    EXPECT_EQ(parent_site.alloc_objects, 0) << "worker " << pid << " counted its parent's";
    EXPECT_EQ(worker_site.alloc_objects, 301) << "pid " << pid;
    EXPECT_EQ(worker_site.inuse_objects, 301) << "pid " << pid;
  }
  EXPECT_EQ(workers, 3);
}

// Three levels of programs, each started by the one above through `sh -c 'PROGRAM ...; exit $?'`
// (so the shell forks, and its child execs the program): 3 program profiles with their own exactly
// known sites, all different pids. The two shells leave with _exit() (dash does), and their
// profiles say so.
class ExecChainTest : public ProcessesTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ExecChainTest, EveryLevelWritesItsOwnProfile) {
  const std::string methods = GetParam();
  RunResult run =
      CompareWithHeaprec({"--sample-interval", "1"}, {REL_PROCS, "chain", "2", methods});
  EXPECT_EQ(run.out, "chain level=2 methods=" + methods + "\nchain level=1 methods=" +
                         methods.substr(1) + "\nchain level=0 methods=\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.exit_profiles.size(), 3u) << Describe(run);
  int found[3] = {0, 0, 0};
  int without_site = 0;
  for (const ProfileFile& file : profiles.files) {
    Values site = SiteValues(file.profile, "site_chain_level");
    if (site == Values{}) {
      ++without_site;  // a shell
      EXPECT_EQ(file.reason, "_exit") << file.path;
      continue;
    }
    EXPECT_EQ(file.reason, "exit") << file.path;
    for (int level = 0; level < 3; ++level) {
      const int64_t n = (level + 1) * 100, bytes = n * (1000 + level);
      if (site == Values{n, bytes, n, bytes}) ++found[level];
    }
  }
  EXPECT_EQ(found[0], 1);
  EXPECT_EQ(found[1], 1);
  EXPECT_EQ(found[2], 1);
  EXPECT_EQ(without_site, 2);
}

INSTANTIATE_TEST_SUITE_P(Methods, ExecChainTest, ::testing::Values("ff", "vp", "pv"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) {
                             name += c == 'f' ? "fork" : c == 'v' ? "vfork" : "spawn";
                           }
                           return name;
                         });

// --no-follow: the whole chain still runs, only the root program is profiled.
TEST_F(ProcessesTest, NoFollowProfilesOnlyTheRootOfAChain) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1", "--no-follow"},
                                     {REL_PROCS, "chain", "2", "fp"});
  EXPECT_EQ(run.out, "chain level=2 methods=fp\nchain level=1 methods=p\nchain level=0 methods=\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  EXPECT_EQ(SiteValues(profiles.files[0].profile, "site_chain_level"),
            (Values{300, 300 * 1002, 300, 300 * 1002}));
}

// HEAPREC_NO_FOLLOW=1 without a pid (the preload-only form): the library takes itself out of
// LD_PRELOAD, so nothing below the root loads it.
TEST_F(ProcessesTest, NoFollowInTheEnvironmentProfilesOnlyTheRoot) {
  RunResult run = CompareWithPreload({{"HEAPREC_NO_FOLLOW", "1"}, {"HEAPREC_SAMPLE_INTERVAL", "1"}},
                                     {REL_PROCS, "chain", "2", "vf"});
  EXPECT_EQ(run.out, "chain level=2 methods=vf\nchain level=1 methods=f\nchain level=0 methods=\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.files.size(), 1u) << Describe(run);
}

// The library takes only itself out of LD_PRELOAD (through `environ`, process/environment.h): the
// program's other preloaded libraries still reach the programs it starts, in the shells that
// define their own getenv (bash) as in those that do not (dash).
TEST_F(ProcessesTest, NoFollowKeepsTheProgramsOtherPreloadedLibraries) {
  for (const char* shell : {"/bin/sh", "/bin/bash"}) {
    RunResult run = PreloadRunGuarded(
        dir(), {shell, "-c", "echo \"$LD_PRELOAD\"; env | grep -c ^LD_PRELOAD="},
        {{"HEAPREC_NO_FOLLOW", "1"}, {"LD_PRELOAD", std::string(HEAPREC_LIB) + ":libm.so.6"}});
    EXPECT_EQ(run.status, 0) << shell << "\n" << Describe(run);
    EXPECT_EQ(run.out, "libm.so.6\n1\n") << shell;
  }
}

}  // namespace
}  // namespace heaprec::reliability
