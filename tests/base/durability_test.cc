// How each writer sends a file to the disk before its rename (base/file_io.h, Durability): the
// atomic writer and a synced RecyclingWriter fsync every file; heaprec run's writer
// (kWritebackStarted) never does, and starts each file's writeback instead. Seen from the calls
// themselves: this executable defines fsync and sync_file_range, which the statically linked
// writers call in place of glibc's, count each call and pass it on to glibc's.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "base/file_io.h"
#include "base/recycling_writer.h"
#include "file_helpers.h"

namespace {

std::atomic<int> g_fsyncs{0};
std::atomic<int> g_writebacks{0};             // sync_file_range calls that start writeback alone
std::atomic<int> g_other_sync_file_range{0};  // any other flags, or a part of the file only

}  // namespace

extern "C" int fsync(int fd) {
  ++g_fsyncs;
  static auto real = reinterpret_cast<int (*)(int)>(dlsym(RTLD_NEXT, "fsync"));
  return real(fd);
}

extern "C" int sync_file_range(int fd, off64_t offset, off64_t count, unsigned int flags) {
  if (offset == 0 && count == 0 && flags == SYNC_FILE_RANGE_WRITE) {
    ++g_writebacks;
  } else {
    ++g_other_sync_file_range;
  }
  static auto real = reinterpret_cast<int (*)(int, off64_t, off64_t, unsigned int)>(
      dlsym(RTLD_NEXT, "sync_file_range"));
  return real(fd, offset, count, flags);
}

namespace heaprec::base {
namespace {

struct Calls {
  int fsyncs;
  int writebacks;
  int other;
};

// What writing `a` and `b` (each replacing a planted file) called, through `write`.
template <typename WriteFn>
Calls CallsOf(WriteFn write) {
  TempDir dir;
  Plant(dir / "a", "a as written by the program");
  Plant(dir / "b", "b as written by the program");
  g_fsyncs = 0;
  g_writebacks = 0;
  g_other_sync_file_range = 0;
  write(dir / "a", "a rewritten");
  write(dir / "b", "b rewritten");
  EXPECT_EQ(Contents(dir / "a"), "a rewritten");
  EXPECT_EQ(Contents(dir / "b"), "b rewritten");
  return {g_fsyncs.load(), g_writebacks.load(), g_other_sync_file_range.load()};
}

// Two files written: each fsynced before its rename, and no writeback started on its own.
void ExpectEachFileSynced(const Calls& calls) {
  EXPECT_EQ(calls.fsyncs, 2);
  EXPECT_EQ(calls.writebacks, 0);
  EXPECT_EQ(calls.other, 0);
}

TEST(DurabilityTest, TheAtomicWriterSyncsEachFile) {
  ExpectEachFileSynced(CallsOf(
      [](const std::string& path, std::string_view data) { WriteFileAtomically(path, data); }));
}

TEST(DurabilityTest, ASyncedRecyclingWriterSyncsEachFile) {
  RecyclingWriter writer{Durability::kSyncedBeforeRename};
  ExpectEachFileSynced(
      CallsOf([&](const std::string& path, std::string_view data) { writer.Write(path, data); }));
}

TEST(DurabilityTest, TheRunsWriterStartsEachFilesWritebackAndNeverWaits) {
  RecyclingWriter writer{Durability::kWritebackStarted};
  Calls calls =
      CallsOf([&](const std::string& path, std::string_view data) { writer.Write(path, data); });
  EXPECT_EQ(calls.fsyncs, 0) << "an fsync per file is a journal commit per file";
  EXPECT_EQ(calls.writebacks, 2) << "each file's whole data, SYNC_FILE_RANGE_WRITE alone";
  EXPECT_EQ(calls.other, 0) << "no flag that waits (SYNC_FILE_RANGE_WAIT_*)";
}

}  // namespace
}  // namespace heaprec::base
