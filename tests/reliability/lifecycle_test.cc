// The edges of a process's life: memory from before heaprec started, memory freed after its final
// dump, exit() from a non-main thread while others allocate. (How a process ends, _exit, abort,
// signals and the rest: endings_test.cc.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class LifecycleTest : public ReliabilityTest {};

// rel_early (a library the program links) allocates in a priority-101 constructor, before
// libheaprec.so is initialized, frees half of it while heaprec runs and the rest in its
// destructor, after heaprec's final dump. The program frees in late atexit handlers (one
// registered from inside another) and in a static destructor: the final profile comes after all
// of them.
TEST_F(LifecycleTest, EarlyAllocationsAndLateFrees) {
  for (const char* interval : {"1", "512K"}) {
    SCOPED_TRACE(std::string("interval ") + interval);
    RunResult run = CompareWithHeaprec({"--sample-interval", interval}, {REL_LIFECYCLE, "atexit"});
    EXPECT_EQ(run.out,
              "early: allocated before main\nmain returns\natexit handler a\natexit handler b\n");
    ProfileSet profiles = ReadProfiles(dir());
    ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
    ASSERT_EQ(profiles.files[0].reason, "exit");
    if (std::string(interval) == "1") {
      const Profile& profile = profiles.files[0].profile;
      // Allocated by main, freed by the atexit handlers and the static destructor: all before the
      // exit profile.
      EXPECT_EQ(SiteValues(profile, "site_lifecycle_live"),
                (Values{150, 50 * (1100 + 1200 + 1300), 0, 0}));
      // Allocated before heaprec started: never sampled, so not in the profile at all.
      EXPECT_EQ(SiteValues(profile, "rel_early_init"), Values{});
    }
    std::filesystem::remove_all(dir() + "/plain");
    for (const ProfileFile& file : profiles.files) std::filesystem::remove(file.path);
  }
}

// exit(5) from a thread while four others churn malloc/free: the exit profile is written by the
// exiting thread while the others keep allocating, and the process exits with 5.
TEST_F(LifecycleTest, ExitFromANonMainThreadWhileOthersAllocate) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1", "--no-symbolize"},
                                     {REL_LIFECYCLE, "thread-exit"}, 5);
  EXPECT_EQ(run.out, "exit from a thread\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  EXPECT_EQ(profiles.files[0].reason, "exit");
}

TEST_F(LifecycleTest, ExitFromANonMainThreadDefaultInterval) {
  for (int i = 0; i < 3; ++i) {
    RunResult run = HeaprecRunGuarded(dir(), {"--no-symbolize"}, {REL_LIFECYCLE, "thread-exit"});
    EXPECT_EQ(run.status, 5) << Describe(run);
    EXPECT_EQ(run.out, "exit from a thread\n");
  }
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 3u);
}

}  // namespace
}  // namespace heaprec::reliability
