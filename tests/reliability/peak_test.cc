// The peak profile under a slow disk: capturing the peak never waits for a peak write. The world
// where a write is slow is made deterministically: programs/rel_slow_rename.so holds the first
// peak write in its rename until the program has burst to its true peak
// (programs/rel_peak_burst.c). Before the capture and the write had their own locks, every capture
// during a write was skipped, and this peak profile held the 8 MiB from before the burst instead of
// the 64 MiB peak.
#include <gtest/gtest.h>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

constexpr int64_t kTruePeak = (128 + 896) * 64 * 1024;  // rel_peak_burst's base and burst

class PeakTest : public ReliabilityTest {};

TEST_F(PeakTest, APeakWriteInProgressDoesNotHideTheNextPeak) {
  // Under heaprec run, which keeps the slow disk in LD_PRELOAD after its own library and
  // symbolizes the profiles.
  RunResult run =
      HeaprecRunGuarded(dir(), {"--sample-interval", "1", "--top", "0"}, {REL_PEAK_BURST, dir()},
                        {{"LD_PRELOAD", REL_SLOW_RENAME}, {"REL_SLOW_RENAME_DIR", dir()}});
  ASSERT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, "peak=" + std::to_string(kTruePeak) + "\n");
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir());
  ASSERT_EQ(peaks.size(), 1u) << Describe(run);
  const Profile& peak = peaks[0].profile;
  // Exact mode: a copy is taken each time the live bytes pass 1.1x the last one, so the last copy
  // of the burst holds at least 1/1.1 of the true peak, and no more than the peak itself.
  int64_t held =
      SiteValues(peak, "site_base").inuse_space + SiteValues(peak, "site_burst").inuse_space;
  EXPECT_GE(held, static_cast<int64_t>(kTruePeak / 1.1)) << "the burst was not captured\n"
                                                         << Describe(run);
  EXPECT_LE(held, kTruePeak);
  EXPECT_GT(SiteValues(peak, "site_burst").inuse_space, 0);
}

}  // namespace
}  // namespace heaprec::reliability
