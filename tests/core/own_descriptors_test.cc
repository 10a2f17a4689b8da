// heaprec's own descriptors sit at the floor (768, or three quarters of a lower RLIMIT_NOFILE) and
// are close-on-exec, whatever the program does to its limit between two opens: the floor known
// from an earlier open is not trusted once the limit went below it. When the program has taken
// every number below its limit, heaprec's file takes the one past it, the limit unchanged after.
#include "core/own_descriptors.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace heaprec {
namespace {

class OwnDescriptorsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved_), 0); }
  void TearDown() override { setrlimit(RLIMIT_NOFILE, &saved_); }

  // Sets the soft limit (within the hard one, which the test cannot raise).
  bool SoftLimit(rlim_t soft) {
    if (saved_.rlim_max != RLIM_INFINITY && soft > saved_.rlim_max) return false;
    rlimit limit = {soft, saved_.rlim_max};
    return setrlimit(RLIMIT_NOFILE, &limit) == 0;
  }

  // Opens a file through OpenOwn and says where it landed, closing it again.
  int OwnNumber() {
    int fd = OpenOwn("/dev/null", O_RDONLY, 0);
    EXPECT_GE(fd, 0);
    if (fd < 0) return fd;
    EXPECT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "close-on-exec";
    close(fd);
    return fd;
  }

  // Takes every free number below the soft limit, as a program that leaks descriptors does.
  static std::vector<int> TakeEveryNumber() {
    std::vector<int> taken;
    for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) taken.push_back(fd);
    EXPECT_EQ(errno, EMFILE);
    return taken;
  }
  static void GiveBack(const std::vector<int>& taken) {
    for (int fd : taken) close(fd);
  }
  static rlim_t Soft() {
    rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    return limit.rlim_cur;
  }

  rlimit saved_;
};

TEST_F(OwnDescriptorsTest, TheFloorFollowsTheLimitDownAndBackUp) {
  ASSERT_TRUE(SoftLimit(4096)) << "the hard limit is below 4096 here";
  EXPECT_EQ(OwnNumber(), 768);
  // Lowered below the floor known from the open before: three quarters of the new limit.
  ASSERT_TRUE(SoftLimit(200));
  EXPECT_EQ(OwnDescriptorFloor(), 150);
  EXPECT_EQ(OwnNumber(), 150);
  // Between the floor and 1,024: the floor known still lies under the limit, and is kept.
  ASSERT_TRUE(SoftLimit(4096));
  EXPECT_EQ(OwnNumber(), 768);
  ASSERT_TRUE(SoftLimit(900));
  EXPECT_EQ(OwnNumber(), 768);
  // At the floor itself F_DUPFD refuses it: asked again.
  ASSERT_TRUE(SoftLimit(768));
  EXPECT_EQ(OwnNumber(), 576);
}

TEST_F(OwnDescriptorsTest, NeverZeroToTwoEvenWhenNothingIsFreeUpThere) {
  // A limit of 8: the floor is 6; with 6 and 7 taken, the lowest free number above 2.
  ASSERT_TRUE(SoftLimit(8));
  int six = dup2(STDERR_FILENO, 6), seven = dup2(STDERR_FILENO, 7);
  ASSERT_EQ(six, 6);
  ASSERT_EQ(seven, 7);
  int fd = OwnNumber();
  EXPECT_GT(fd, STDERR_FILENO);
  EXPECT_LT(fd, 6);
  close(six);
  close(seven);
}

TEST_F(OwnDescriptorsTest, EveryNumberTakenTheFileGoesPastTheLimitWhichStaysTheProgramsOwn) {
  ASSERT_TRUE(SoftLimit(64));
  std::vector<int> taken = TakeEveryNumber();
  int fd = OpenOwn("/dev/null", O_RDONLY, 0);
  EXPECT_EQ(fd, 64) << strerror(errno);
  EXPECT_EQ(Soft(), 64u) << "the program's limit is put back";
  EXPECT_LT(open("/dev/null", O_RDONLY), 0) << "the program's own open fails as before";
  EXPECT_EQ(errno, EMFILE);
  if (fd >= 0) {
    EXPECT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    close(fd);
  }
  GiveBack(taken);
}

// In a child (the hard limit is lowered for good): 0 when the open fails with EMFILE and the limits
// are as they were.
[[noreturn]] void OpenWithEveryNumberTakenUnderTheHardLimit() {
  rlimit limit = {64, 64};
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(2);
  while (open("/dev/null", O_RDONLY) >= 0) {
  }
  int fd = OpenOwn("/dev/null", O_RDONLY, 0);
  int error = errno;
  getrlimit(RLIMIT_NOFILE, &limit);
  _exit(fd == -1 && error == EMFILE && limit.rlim_cur == 64 && limit.rlim_max == 64 ? 0 : 1);
}

TEST_F(OwnDescriptorsTest, EveryNumberTakenUnderTheHardLimitTheOpenFailsAndNothingChanges) {
  EXPECT_EXIT(OpenWithEveryNumberTakenUnderTheHardLimit(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace heaprec
