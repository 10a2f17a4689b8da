// Other code in the process: a library loaded with dlopen and unloaded with dlclose while blocks it
// allocated live on; another allocator (jemalloc, tcmalloc) preloaded after or before heaprec.
#include <gtest/gtest.h>

#include <string>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class LibrariesTest : public ReliabilityTest {};

TEST_F(LibrariesTest, DlopenDlcloseExact) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {REL_DLOPEN, REL_DLMOD, "20"});
  EXPECT_EQ(run.out,
            "dlerror: librel-no-such-library.so: cannot open shared object file: No such file or "
            "directory\ncycles=20 kept=300000\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  const Profile& profile = profiles.files[0].profile;
  // The blocks are accounted exactly whatever their stacks say.
  EXPECT_EQ(SiteValuesOfSize(profile, "", 3000), (Values{100, 300000, 100, 300000}));
  EXPECT_EQ(SiteValuesOfSize(profile, "", 4000), (Values{100, 400000, 0, 0}));
  // Their stacks name the library's functions, although the library is no longer loaded when the
  // profile is written: its mappings are remembered at dlclose (objects/unloaded_libraries.h).
  EXPECT_EQ(SiteValues(profile, "rel_dlmod_keep"), (Values{100, 300000, 100, 300000}))
      << "frames of the dlclosed library are not symbolized";
  EXPECT_EQ(SiteValues(profile, "rel_dlmod_temp"), (Values{100, 400000, 0, 0}))
      << "frames of the dlclosed library are not symbolized";
}

// Peak profiles are written by heaprec's dump thread while the program goes on: here, while it
// unloads the library whose frames the profile is describing. Reading an unmapped ELF header used
// to kill the program about once in 25 runs; 40 seeded runs, each must end as it does alone.
//
// And each run that sampled a block has written a valid peak profile by its exit: one sampled
// block of n >= 1 bytes alone makes the live estimate n / (1 - exp(-(n + 1) / T)) >= T / 2 (256 KiB
// at the default interval T), past the 64 KiB floor of the peak copy, which is taken then and
// written by the dump thread or, at the latest, by the final dump beside the final profile. So a
// run has one peak profile exactly when its final profile counts allocated bytes. The program
// allocates about 1.8 MiB, 3.6 T: a run samples nothing with probability exp(-3.6), 3% (here 4 of
// the 40 seeds), and all 40 runs nothing with probability 1e-60: at least one peak profile must be.
TEST_F(LibrariesTest, DlcloseWhilePeakProfilesAreWritten) {
  size_t peak_profiles = 0;
  for (int seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    TempDir run_dir;
    RunResult run = PreloadRunGuarded(run_dir.path(), {REL_DLOPEN, REL_DLMOD, "50"},
                                      {{"HEAPREC_SEED", std::to_string(seed)}});
    ASSERT_EQ(run.status, 0) << Describe(run);
    EXPECT_NE(run.out.find("cycles=50 kept=750000\n"), std::string::npos) << Describe(run);
    ProfileSet profiles = ReadProfiles(run_dir.path());
    ASSERT_EQ(profiles.exit_profiles.size(), 1u) << Describe(run);
    const int64_t sampled_bytes =
        e2e::TotalValues(profiles.files[profiles.exit_profiles.begin()->second].profile)
            .alloc_space;
    std::vector<ProfileFile> peaks = ReadPeakProfiles(run_dir.path());
    EXPECT_EQ(peaks.size(), sampled_bytes > 0 ? 1u : 0u)
        << "the final profile counts " << sampled_bytes << " allocated bytes";
    peak_profiles += peaks.size();
  }
  EXPECT_GE(peak_profiles, 1u) << "no run wrote a peak profile";
}

TEST_F(LibrariesTest, DlopenDlcloseDefaultInterval) {
  RunResult run = CompareWithHeaprec({}, {REL_DLOPEN, REL_DLMOD, "50"});
  EXPECT_EQ(run.out.substr(run.out.find("cycles=")), "cycles=50 kept=750000\n");
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u);
}

// Another allocator preloaded after heaprec: heaprec forwards every call to it (mallocx blocks
// freed with free, malloc_usable_size on everything), and the profile has the program's sites.
class AllocatorAfterTest : public LibrariesTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(AllocatorAfterTest, HeaprecForwardsToIt) {
  const std::string library = GetParam() == "jemalloc" ? HEAPREC_JEMALLOC : HEAPREC_TCMALLOC;
  // heaprec run puts its own library first and keeps the existing LD_PRELOAD after it.
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {REL_OTHER_ALLOC}, 0, 120,
                                     {{"LD_PRELOAD", library}});
  EXPECT_EQ(run.out.find("mallocx: found ok=1000\n") == 0, GetParam() == "jemalloc") << run.out;
  EXPECT_NE(run.out.find("negative last words: 0 overlapping blocks\n"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("usable_size ok=6000 of 6000\naligned ok=50 of 50\n"), std::string::npos)
      << run.out;
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  const Profile& profile = profiles.files[0].profile;
  // glibc's accounting (mallinfo2) says nothing of this heap: the profile does not pass it off as
  // the allocator's (the summary took 0 B "in use by malloc" and the heap for "stacks").
  EXPECT_EQ(e2e::CommentText(profile, "malloc_in_use"), "");
  EXPECT_EQ(SiteValues(profile, "site_other_keep"), (Values{200, 300000, 200, 300000}));
  EXPECT_EQ(SiteValues(profile, "site_other_aligned"), (Values{50, 102400, 50, 102400}));
}

TEST_P(AllocatorAfterTest, DefaultInterval) {
  const std::string library = GetParam() == "jemalloc" ? HEAPREC_JEMALLOC : HEAPREC_TCMALLOC;
  RunResult run = CompareWithHeaprec({}, {REL_OTHER_ALLOC}, 0, 120, {{"LD_PRELOAD", library}});
  EXPECT_EQ(ReadProfiles(dir()).exit_profiles.size(), 1u) << Describe(run);
}

// Another allocator preloaded before heaprec: the program never calls heaprec. One line says so;
// the program is otherwise untouched and no (empty) profile is written.
TEST_P(AllocatorAfterTest, PreloadedBeforeHeaprecSaysSoInOneLine) {
  const std::string library = GetParam() == "jemalloc" ? HEAPREC_JEMALLOC : HEAPREC_TCMALLOC;
  RunResult plain = RunGuarded({REL_OTHER_ALLOC}, dir(), {{"LD_PRELOAD", library}});
  ASSERT_EQ(plain.status, 0) << Describe(plain);
  RunResult run = RunGuarded({REL_OTHER_ALLOC}, dir(),
                             {{"LD_PRELOAD", library + ":" + HEAPREC_LIB},
                              {"HEAPREC_OUTPUT", dir() + "/p.%p.pb.gz"},
                              {"HEAPREC_SAMPLE_INTERVAL", "1"}});
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, plain.out);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << Describe(run);
  EXPECT_NE(lines[0].find("heaprec"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find(GetParam() == "jemalloc" ? "libjemalloc" : "libtcmalloc"),
            std::string::npos)
      << lines[0];
  EXPECT_TRUE(ReadProfiles(dir()).files.empty());
}

INSTANTIATE_TEST_SUITE_P(Allocators, AllocatorAfterTest, ::testing::Values("jemalloc", "tcmalloc"));

// An executable whose segments lie 2 MiB apart (node is linked so): the loader's _dl_find_object
// gives the span of the segment holding an address, not of the program, and the program's
// headers were looked for where they are not. Every frame of the program went without a mapping,
// so without a name. The site is named, and its blocks are all there (exact mode).
class SegmentGapsTest : public LibrariesTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(SegmentGapsTest, TheProgramsFramesHaveTheirMappingAndNames) {
  const std::string program = GetParam() == "nopie" ? REL_GAPS_NOPIE : REL_GAPS_PIE;
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {program, "200", "1000"});
  EXPECT_EQ(run.out, "simple count=200 bytes=200000\n");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u) << Describe(run);
  EXPECT_EQ(SiteValues(profiles.files[0].profile, "site_simple_keep"),
            (Values{200, 200000, 200, 200000}));
}

INSTANTIATE_TEST_SUITE_P(Executables, SegmentGapsTest, ::testing::Values("nopie", "pie"));

// An executable that defines its own malloc (Chromium's PartitionAlloc, a static tcmalloc) wins
// over every preloaded library: one line names that cause (not "put libheaprec.so first", which it
// already is), the program is otherwise untouched, and no profile is written.
TEST(OwnMallocTest, ExecutableWithItsOwnMallocSaysSoInOneLine) {
  TempDir dir;
  RunResult plain = RunGuarded({REL_OWN_MALLOC}, dir.path());
  ASSERT_EQ(plain.status, 0) << Describe(plain);
  ASSERT_EQ(plain.out.rfind("own malloc handed out ", 0), 0u) << plain.out;
  RunResult run =
      PreloadRunGuarded(dir.path(), {REL_OWN_MALLOC}, {{"HEAPREC_SAMPLE_INTERVAL", "1"}});
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, plain.out);
  std::vector<std::string> lines = Lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << Describe(run);
  EXPECT_EQ(lines[0],
            "heaprec: the program defines its own malloc (rel_own_malloc has its allocator built "
            "in), which LD_PRELOAD cannot replace; nothing can be profiled");
  EXPECT_TRUE(ReadProfiles(dir.path()).files.empty());
}

}  // namespace
}  // namespace heaprec::reliability
