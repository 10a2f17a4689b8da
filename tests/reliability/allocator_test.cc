// The allocator API's edge cases, C++ exceptions at a high rate, and stacks deeper than
// --max-depth.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class AllocatorTest : public ReliabilityTest {
 public:
  using ReliabilityTest::CompareWithHeaprec;
  using ReliabilityTest::dir;
};

void ExpectTaggedBlocksBehave(AllocatorTest& test, const char* interval) {
  RunResult run = test.CompareWithHeaprec({"--sample-interval", interval}, {REL_TAGGED, "300"});
  EXPECT_EQ(run.out.rfind("tagged: 2700 allocations, ", 0), 0u) << run.out;
  EXPECT_NE(run.out.find(", 0 failures\n"), std::string::npos) << run.out;
  ProfileSet profiles = ReadProfiles(test.dir());
  ASSERT_EQ(profiles.exit_profiles.size(), 1u);
  // Every block the program allocated was freed: none of its samples may be left alive (the C
  // runtime's own buffers may), and some were sampled.
  const ProfileFile& exit = profiles.files[profiles.exit_profiles.begin()->second];
  for (const char* site : {"(anonymous namespace)::Allocate", "(anonymous namespace)::Grow"}) {
    e2e::Values values = e2e::SiteValues(exit.profile, site);
    EXPECT_EQ(values.inuse_space, 0) << site;
    EXPECT_GT(values.alloc_objects, 0) << site;
  }
}

// Every result (null or not, errno, alignment, posix_memalign's out pointer) printed by the
// program is the same with and without heaprec, in exact mode (every call through the slow path)
// and at the default interval; with heaprec run and with the library preloaded alone.
TEST_F(AllocatorTest, EdgeCaseResultsAreUnchangedExact) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {REL_ALLOC_EDGES});
  // A few results are known whatever the platform: make sure the program checked something.
  EXPECT_NE(run.out.find("calloc(SIZE_MAX/2, 3)                    null errno=ENOMEM"),
            std::string::npos)
      << run.out;
  EXPECT_NE(
      run.out.find("posix_memalign(3, 64)                    rc=EINVAL errno=0 out=untouched"),
      std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("errno kept by malloc and free            2000 of 2000"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

TEST_F(AllocatorTest, EdgeCaseResultsAreUnchangedDefaultInterval) {
  CompareWithHeaprec({}, {REL_ALLOC_EDGES});
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

// Sampled blocks are handed out behind a tag (src/preload/tagged_blocks.h): every entry point's
// blocks, filled to their usable size, realloc'd in place and moved, freed from another thread,
// keep their contents and alignment, and glibc finds nothing to complain about. Exact mode tags
// every block; 4 KiB tags some, so that tagged and untagged blocks meet in realloc and free.
void ExpectTaggedBlocksBehave(AllocatorTest& test, const char* interval);

TEST_F(AllocatorTest, SampledBlocksBehaveLikeOthersExact) { ExpectTaggedBlocksBehave(*this, "1"); }

TEST_F(AllocatorTest, SampledBlocksBehaveLikeOthersMixed) {
  ExpectTaggedBlocksBehave(*this, "4096");
}

TEST_F(AllocatorTest, EdgeCaseResultsAreUnchangedPreloaded) {
  CompareWithPreload({{"HEAPREC_SAMPLE_INTERVAL", "1"}}, {REL_ALLOC_EDGES});
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

// A non-PIE program that takes the addresses of malloc, free, realloc and posix_memalign: heaprec
// must still see that glibc is the allocator (the executable only has PLT stubs for them), profile
// the program, and never call through those stubs back into itself.
TEST_F(AllocatorTest, NonPieProgramPassingAllocatorFunctionPointers) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {REL_FNPTR});
  EXPECT_EQ(run.out, "fnptr ok=2000\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  EXPECT_EQ(SiteValues(profiles.files[0].profile, "site_fnptr_keep"),
            (Values{100, 100000, 100, 100000}));
}

// 200,000 C++ exceptions thrown and caught (each allocates its exception object and unwinds).
TEST_F(AllocatorTest, ExceptionsAtAHighRate) {
  RunResult run = CompareWithHeaprec({"--no-symbolize"}, {REL_CXX_STRESS, "throw", "200000"});
  EXPECT_EQ(run.out.rfind("thrown=200000 caught=200000 ", 0), 0u) << run.out;
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

TEST_F(AllocatorTest, ExceptionsExact) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1", "--no-symbolize"},
                                     {REL_CXX_STRESS, "throw", "20000"});
  EXPECT_EQ(run.out.rfind("thrown=20000 caught=20000 ", 0), 0u) << run.out;
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

// Allocations 2000 frames deep with --max-depth 64: stacks are cut to their innermost 64 frames
// (so the allocating function is still there) and counted in truncated_stacks.
TEST_F(AllocatorTest, DeepRecursionIsTruncatedToMaxDepth) {
  for (const char* unwind : {"dwarf", "fp"}) {
    SCOPED_TRACE(unwind);
    RunResult run =
        CompareWithHeaprec({"--sample-interval", "1", "--max-depth", "64", "--unwind", unwind},
                           {REL_CXX_STRESS, "deep", "2000"});
    EXPECT_EQ(run.out, "depth=2000\n");
    ProfileSet profiles = ReadProfiles(dir());
    ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
    const Profile& profile = profiles.files[0].profile;
    EXPECT_LE(MaxStackDepth(profile), 64u);
    EXPECT_GT(CommentValue(profile, "truncated_stacks"), 0);
    EXPECT_EQ(SiteValues(profile, "site_deep_leaf"), (Values{100, 100000, 100, 100000}));
    std::filesystem::remove_all(dir() + "/plain");
    for (const ProfileFile& file : profiles.files) std::filesystem::remove(file.path);
  }
}

}  // namespace
}  // namespace heaprec::reliability
