// heaprec's own descriptors sit at the floor (768, or three quarters of a lower RLIMIT_NOFILE) and
// are close-on-exec, whatever the program does to its limit between two opens: the floor known
// from an earlier open is not trusted once the limit went below it.
#include "core/own_descriptors.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

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

}  // namespace
}  // namespace heaprec
