// Threads and signals: 300 threads freeing each other's blocks and exiting with live samples,
// thread_local destructors that free; signals arriving inside malloc (handlers that are
// async-signal-safe, and handlers that call malloc); the dump signal sent hundreds of times.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class ThreadsTest : public ReliabilityTest {};

TEST_F(ThreadsTest, ThreeHundredThreadsExact) {
  constexpr int64_t kThreads = 300;
  RunResult run =
      CompareWithHeaprec({"--sample-interval", "1"}, {REL_THREADS, std::to_string(kThreads)});
  EXPECT_EQ(run.out, "threads=300 joined\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  const Profile& profile = profiles.files[0].profile;
  int64_t cross_bytes = 0;
  for (int64_t t = 0; t < kThreads; ++t) cross_bytes += 20 * (100 + t);
  EXPECT_EQ(SiteValues(profile, "site_cross_alloc"), (Values{kThreads * 20, cross_bytes, 0, 0}));
  // Held by threads that exited; the odd threads' blocks are still live at exit.
  EXPECT_EQ(SiteValues(profile, "site_thread_held"),
            (Values{kThreads * 3, kThreads * 3 * 2000, kThreads / 2 * 3, kThreads / 2 * 3 * 2000}));
  // Every thread's thread_local destructor (main's included, run by exit()) freed its blocks.
  // (The first use of the thread_local also allocates glibc's destructor-list entry there.)
  EXPECT_EQ(SiteValuesOfSize(profile, "site_tls_alloc", 500),
            (Values{(kThreads + 1) * 10, (kThreads + 1) * 10 * 500, 0, 0}));
  EXPECT_EQ(SiteValues(profile, "site_tls_alloc").inuse_objects, 0);
}

TEST_F(ThreadsTest, ThreeHundredThreadsDefaultInterval) {
  RunResult run = CompareWithHeaprec({}, {REL_THREADS, "300"});
  EXPECT_EQ(run.out, "threads=300 joined\n");
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

// A thread churning malloc/realloc/free gets SIGUSR1 2000 times (each waited for, so each is
// delivered, most of them inside the allocator). The handler is either async-signal-safe or calls
// malloc and free itself. Both at the default interval and in exact mode, where nearly every
// interrupted call is inside heaprec's slow path, possibly holding a recorder lock.
using SignalParam = std::tuple<std::string, bool>;  // handler, exact
class SignalsInMallocTest : public ReliabilityTest,
                            public ::testing::WithParamInterface<SignalParam> {};

TEST_P(SignalsInMallocTest, NoCrashNoHangSameOutput) {
  const auto& [handler, exact] = GetParam();
  std::vector<std::string> flags = {"--no-symbolize"};
  if (exact) flags = {"--sample-interval", "1", "--no-symbolize"};
  RunResult run = CompareWithHeaprec(flags, {REL_SIGNALS, handler, "2000"});
  EXPECT_EQ(run.out, "signals sent=2000 handled=2000\n");
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Handlers, SignalsInMallocTest,
                         ::testing::Combine(::testing::Values("safe", "malloc"), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<SignalParam>& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) ? "_exact" : "_default");
                         });

// A signal that arrives while a sampled allocation waits inside glibc for its arena lock, staged
// every run (programs/rel_signal_in_glibc.c). heaprec defers it until glibc returns, so that a
// handler that allocates never runs on top of a heaprec call into glibc that holds the lock (the
// hang SignalsInMallocTest.malloc_default hit before, in the 14th run of a loop under load). glibc
// alone runs the handler right there (the stage works), and so does heaprec in exact mode, where
// its requests replace the program's one for one (alloc/tagged_blocks.cc).
TEST_F(ThreadsTest, SignalDuringASampledCallIntoGlibcWaitsForItsReturn) {
  RunResult plain = RunGuarded({REL_SIGNAL_IN_GLIBC}, dir(), {}, 60);
  ASSERT_EQ(plain.status, 0) << Describe(plain);
  EXPECT_EQ(plain.out, "handler ran inside malloc\n");
  RunResult sampled = HeaprecRunGuarded(dir(), {"--sample-interval", "4K", "--no-symbolize"},
                                        {REL_SIGNAL_IN_GLIBC}, {}, 60);
  ASSERT_EQ(sampled.status, 0) << Describe(sampled);
  EXPECT_EQ(sampled.out, "signal deferred until malloc returned\n");
  RunResult exact = HeaprecRunGuarded(dir(), {"--sample-interval", "1", "--no-symbolize"},
                                      {REL_SIGNAL_IN_GLIBC}, {}, 60);
  ASSERT_EQ(exact.status, 0) << Describe(exact);
  EXPECT_EQ(exact.out, "handler ran inside malloc\n");
}

// 300 x SIGUSR2 (the dump signal) 1 ms apart while a thread allocates: every dump request is
// served or merged with one in progress; the program never sees the signal.
TEST_F(ThreadsTest, DumpSignalSentHundredsOfTimes) {
  RunResult run = CompareWithHeaprec({"--dump-signal", "SIGUSR2", "--no-symbolize"},
                                     {REL_SIGNALS, "dump", "300"});
  EXPECT_EQ(run.out, "dump signals sent=300\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.exit_profiles.size(), 1u);
  EXPECT_GE(profiles.Count("signal"), 1);
  EXPECT_LE(profiles.Count("signal"), 300);
}

// The same in exact mode, where every dump has a large live set to copy while the program frees.
TEST_F(ThreadsTest, DumpSignalSentHundredsOfTimesExact) {
  RunResult run =
      CompareWithHeaprec({"--dump-signal", "SIGUSR2", "--sample-interval", "1", "--no-symbolize"},
                         {REL_SIGNALS, "dump", "300"});
  EXPECT_EQ(run.out, "dump signals sent=300\n");
  ProfileSet profiles = ReadProfiles(dir());
  EXPECT_EQ(profiles.exit_profiles.size(), 1u);
  EXPECT_GE(profiles.Count("signal"), 1);
}

}  // namespace
}  // namespace heaprec::reliability
