// The heap record (preload/record/heap_record.h): what a process killed without warning leaves.
// SIGKILL 100 ms after growing to 160 MiB, and the OOM killer under a cgroup memory limit, must
// leave a profile of the heap at death, written by `heaprec run` (which sees the death) or by
// `heaprec recover` (for a process started otherwise). The program is programs/rel_grow.c.
//
// The bound on the estimates: an n-byte block is sampled with probability p = 1 - exp(-(n+1)/T)
// and counted n/p (tests/e2e/sampled_test.cc derives it); for N blocks Var(X) = N n^2 (1-p)/p.
// Here n = 1 MiB and T = 512 KiB: p = 0.865, and for 160 blocks sigma = 5.1 MiB (3.2%). The
// tests allow 5 sigma (probability ~6e-7 of a false failure; the seeds are fixed besides).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "endings_util.h"

namespace heaprec::reliability {
namespace {

constexpr double kBlock = 1 << 20;
constexpr double kInterval = 512 * 1024;

// What the program held, in bytes, and 5 sigma of its estimate.
struct Truth {
  double bytes, tolerance;
};
Truth BlocksHeld(long blocks) {
  double sigma =
      std::sqrt(e2e::SampledBytesVariance(static_cast<double>(blocks), kBlock, kInterval));
  return {static_cast<double>(blocks) * kBlock, 5 * sigma};
}

std::vector<std::string> RecordsIn(const std::string& dir) {
  std::vector<std::string> records;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".record") records.push_back(entry.path().string());
  }
  return records;
}

// The killed profile of `pid` in `dir`: checked like every profile, with reason=killed.
const ProfileFile* KilledProfile(const ProfileSet& profiles, pid_t pid) {
  auto it = profiles.final_profiles.find(pid);
  if (it == profiles.final_profiles.end()) return nullptr;
  const ProfileFile& file = profiles.files[it->second];
  EXPECT_EQ(file.reason, "killed");
  return &file;
}

void ExpectHeld(const Profile& profile, const Truth& truth, const std::string& what) {
  Values site = SiteValues(profile, "grow_block");
  EXPECT_NEAR(static_cast<double>(site.inuse_space), truth.bytes, truth.tolerance)
      << what << ": " << site;
}

// The number of the program's last "grown K" line: the blocks it held when it died.
long LastGrown(const std::string& out) {
  long last = 0;
  for (const std::string& line : e2e::Lines(out)) {
    if (line.rfind("grown ", 0) == 0) last = std::atol(line.c_str() + 6);
  }
  return last;
}

// Runs rel_grow ARG in `dir` (under `argv`'s heaprec run, or preloaded with `env`), tells it to go,
// and calls `after_go(pid, process)`; returns the run.
template <typename AfterGo>
RunResult Grow(const std::vector<std::string>& argv, const std::string& dir, const EnvChanges& env,
               pid_t* pid, AfterGo&& after_go) {
  BackgroundProcess process(Options(argv, dir, env));
  *pid = process.WaitUntilReady();
  EXPECT_GT(*pid, 0) << "never said ready: " << process.Stderr();
  if (*pid > 0) {
    after_go(*pid, process);
  }
  return process.Wait();
}

void KillSoonAfterGrowing(pid_t pid, BackgroundProcess& process) {
  process.Send("go");
  EXPECT_NE(process.WaitForLine("held"), "") << process.Stderr();
  usleep(100 * 1000);
  EXPECT_EQ(kill(pid, SIGKILL), 0);
}

TEST_F(EndingsTest, SigkillSoonAfterGrowingLeavesTheHeapAtDeathUnderHeaprecRun) {
  std::string dir = RunDirectory("run");
  pid_t pid = -1;
  RunResult run = Grow(UnderHeaprec(dir, {REL_GROW, "160"}, {"--seed", "7"}), dir, {}, &pid,
                       KillSoonAfterGrowing);
  EXPECT_EQ(run.status, 137) << DescribeEnding(run);
  EXPECT_TRUE(Contains(run.err, "killed without warning")) << run.err;
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, pid);
  ASSERT_NE(killed, nullptr) << DescribeEnding(run);
  EXPECT_EQ(CommentText(killed->profile, "signal"), "SIGKILL");
  ExpectHeld(killed->profile, BlocksHeld(160), "heap at death");
  // The program died at its peak: the peak profile holds it too (within sampling, however slowly
  // the on-disk copy was rewritten).
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir);
  ASSERT_EQ(peaks.size(), 1u);
  ExpectHeld(peaks[0].profile, BlocksHeld(160), "peak");
  EXPECT_TRUE(RecordsIn(dir).empty()) << "a recovered record is removed";
}

// The inode of the heap record process `pid` maps (0 until it maps one, or after 10 s).
unsigned long MappedRecordInode(pid_t pid) {
  unsigned long inode = 0;
  WaitUntil([&] {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string address, permissions, offset, device, path;
    unsigned long candidate = 0;
    while (maps >> address >> permissions >> offset >> device >> candidate) {
      std::getline(maps, path);
      if (path.size() > 7 && path.compare(path.size() - 7, 7, ".record") == 0) inode = candidate;
    }
    return inode != 0;
  });
  return inode;
}

// The inode rel_grow's "record INODE" line names (0 when it has none).
unsigned long SaidRecordInode(const std::string& out) {
  for (const std::string& line : e2e::Lines(out)) {
    if (line.rfind("record ", 0) == 0) return std::stoul(line.substr(7));
  }
  return 0;
}

std::vector<std::string> SparesIn(const std::string& dir) {
  std::vector<std::string> spares;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(".heaprec-record-spare.", 0) == 0) {
      spares.push_back(entry.path().filename().string());
    }
  }
  return spares;
}

// Under heaprec run an ended record's file outlives its process, emptied, as a spare the next
// process's record takes over: a make's few hundred short processes then do not each make and
// free an inode (docs/design/heap-record.md, "Spares"). The second process here dies by SIGKILL:
// its heap at death must hold its own 160 blocks and nothing of the first process's 40.
TEST_F(EndingsTest, TheNextProcessUnderHeaprecRunTakesOverAnEndedRecordsFile) {
  std::string dir = RunDirectory("spare");
  pid_t pid = -1;
  unsigned long first = 0, second = 0;
  RunResult run =
      Grow(UnderHeaprec(dir, {"sh", "-c", "\"$0\" exit 40; \"$0\" 160", REL_GROW}, {"--seed", "5"}),
           dir, {}, &pid, [&](pid_t p, BackgroundProcess& process) {
             first = SaidRecordInode(process.WaitForLine("record "));
             process.Send("go");
             EXPECT_NE(process.WaitForLine("held"), "") << process.Stderr();
             second = MappedRecordInode(p);
             EXPECT_EQ(kill(p, SIGKILL), 0);
           });
  EXPECT_EQ(run.status, 137) << DescribeEnding(run);
  EXPECT_NE(first, 0u) << "the first process kept no record";
  EXPECT_EQ(second, first) << "the second process's record is a file of its own";
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, pid);
  ASSERT_NE(killed, nullptr) << DescribeEnding(run);
  ExpectHeld(killed->profile, BlocksHeld(160), "heap at death");
  EXPECT_TRUE(RecordsIn(dir).empty()) << "a recovered record is removed";
  EXPECT_EQ(SparesIn(dir), std::vector<std::string>()) << "heaprec run removes the spares";
}

// A spare is whatever a name in the profile directory holds: a symlink's target or a file with a
// second name would be emptied and written by the next record, and a file that is not empty may be
// another process's live record (two processes sharing a record name can rename each other's
// file): truncating it would crash its owner. None of them is taken; each loses its spare name and
// nothing else. The full file here is mapped, as its owner would have it.
TEST_F(EndingsTest, OnlyAnEmptyPlainFileOfItsOwnIsTakenOver) {
  std::string dir = RunDirectory("hostile");
  const std::string victim = dir + "/victim", linked = dir + "/linked", kept = "kept\n";
  for (const std::string& path : {victim, linked}) std::ofstream(path) << kept;
  ASSERT_EQ(symlink(victim.c_str(), (dir + "/.heaprec-record-spare.0").c_str()), 0);
  ASSERT_EQ(link(linked.c_str(), (dir + "/.heaprec-record-spare.1").c_str()), 0);
  const std::string full = dir + "/.heaprec-record-spare.2";
  constexpr std::size_t kFullBytes = 4 << 20;
  std::ofstream(full) << std::string(kFullBytes, '\xff');
  int full_fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(full_fd, 0);
  void* mapped = mmap(nullptr, kFullBytes, PROT_READ, MAP_SHARED, full_fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  struct stat full_status = {};
  ASSERT_EQ(fstat(full_fd, &full_status), 0);
  pid_t pid = -1;
  unsigned long inode = 0;
  RunResult run = Grow(UnderHeaprec(dir, {REL_GROW, "160"}, {"--seed", "9"}), dir, {}, &pid,
                       [&](pid_t p, BackgroundProcess& process) {
                         process.Send("go");
                         EXPECT_NE(process.WaitForLine("held"), "") << process.Stderr();
                         inode = MappedRecordInode(p);
                         EXPECT_EQ(kill(p, SIGKILL), 0);
                       });
  EXPECT_EQ(run.status, 137) << DescribeEnding(run);
  EXPECT_NE(inode, 0u);
  EXPECT_NE(inode, full_status.st_ino) << "the full file became a record";
  ASSERT_EQ(fstat(full_fd, &full_status), 0);
  EXPECT_EQ(full_status.st_size, static_cast<off_t>(kFullBytes)) << "the full file was truncated";
  EXPECT_EQ(static_cast<const unsigned char*>(mapped)[kFullBytes - 1], 0xff);
  munmap(mapped, kFullBytes);
  close(full_fd);
  for (const std::string& path : {victim, linked}) {
    struct stat status = {};
    ASSERT_EQ(stat(path.c_str(), &status), 0) << path;
    EXPECT_EQ(status.st_nlink, 1u) << path;
    std::ifstream in(path);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), kept) << path;
  }
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, pid);
  ASSERT_NE(killed, nullptr) << DescribeEnding(run);
  ExpectHeld(killed->profile, BlocksHeld(160), "heap at death");
  EXPECT_EQ(SparesIn(dir), std::vector<std::string>());
}

// A child made without fork's handlers (a raw clone) shares its parent's record mapping; when it
// exits, the record is the parent's still: it must not be ended, emptied or handed on (the
// parent's next sampled allocation would find its pages gone: SIGBUS).
TEST_F(EndingsTest, AChildMadeWithoutForkHandlersLeavesItsParentsRecordAlone) {
  std::string dir = RunDirectory("clone");
  RunResult run = RunGuarded(UnderHeaprec(dir, {REL_GROW, "clone", "40"}, {"--seed", "4"}), dir);
  EXPECT_EQ(run.status, 0) << DescribeEnding(run);
  std::vector<std::string> said;
  for (const std::string& line : e2e::Lines(run.out)) {
    if (line.rfind("record ", 0) == 0) said.push_back(line);
  }
  ASSERT_EQ(said.size(), 2u) << run.out;
  EXPECT_NE(said[0], "record 0");
  EXPECT_EQ(said[1], said[0]) << "the parent's record changed under it";
}

// Removes the directories rel_grow's `blocked` mode put at its final profile's name, so that the
// profiles can be read: the pid each was for.
pid_t RemoveBlockingDirectory(const std::string& dir) {
  pid_t pid = -1;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    pid = std::atoi(entry.path().filename().string().substr(2).c_str());  // "p.PID.pb.gz"
    std::filesystem::remove(entry.path());
  }
  return pid;
}

// A process that reaches its end but cannot write its final profile (here a directory is in the
// way; a full disk is the same) keeps its record, marked with how it ended: heaprec run writes
// that profile from the record with the process's own reason, exit, and why the write failed,
// rather than calling the process killed. Preloaded, heaprec recover does the same.
TEST_F(EndingsTest, AFinalProfileThatCouldNotBeWrittenComesFromTheRecordWithItsEnding) {
  std::string dir = RunDirectory("blocked");
  RunResult run =
      RunGuarded(UnderHeaprec(dir, {REL_GROW, "blocked", "40", dir}, {"--seed", "8"}), dir);
  EXPECT_EQ(run.status, 0) << DescribeEnding(run);
  EXPECT_NE(SaidRecordInode(run.out), 0u) << run.out;
  EXPECT_TRUE(Contains(run.err, "could not write profile")) << run.err;
  EXPECT_TRUE(Contains(run.err,
                       "could not write its final profile (Is a directory); written from "
                       "its heap record to "))
      << run.err;
  EXPECT_FALSE(Contains(run.err, "killed")) << run.err;
  EXPECT_TRUE(RecordsIn(dir).empty()) << "a recovered record is removed";
  // The name was taken (by the directory): the pid goes before the extension, as for a template
  // that names every process's profile alike.
  const std::string pid = std::to_string(RemoveBlockingDirectory(dir));
  std::optional<ProfileFile> file = ReadValidProfile(dir + "/p." + pid + "." + pid + ".pb.gz");
  ASSERT_TRUE(file.has_value()) << run.err;
  EXPECT_EQ(CommentText(file->profile, "reason"), "exit");
  EXPECT_EQ(ReadPeakProfiles(dir).size(), 1u) << "the process wrote its peak itself";
  EXPECT_EQ(CommentText(file->profile, "final_write_error"), "EISDIR");
  ExpectHeld(file->profile, BlocksHeld(40), "heap at exit");

  std::string preloaded = RunDirectory("blocked-preload");
  RunResult alone = RunGuarded({REL_GROW, "blocked", "40", preloaded}, preloaded,
                               PreloadEnv(preloaded, false, {{"HEAPREC_SEED", "8"}}));
  EXPECT_EQ(alone.status, 0) << DescribeEnding(alone);
  ASSERT_EQ(RecordsIn(preloaded).size(), 1u) << alone.err;
  pid_t alone_pid = RemoveBlockingDirectory(preloaded);
  RunResult recover = RunGuarded({HEAPREC_BIN, "recover", preloaded}, preloaded);
  EXPECT_EQ(recover.status, 0) << DescribeEnding(recover);
  EXPECT_TRUE(Contains(recover.out,
                       "heap at its end (exit; it could not write its final profile: "
                       "Is a directory)"))
      << recover.out;
  std::optional<ProfileFile> recovered =
      ReadValidProfile(preloaded + "/p." + std::to_string(alone_pid) + ".pb.gz");
  ASSERT_TRUE(recovered.has_value()) << recover.out;
  EXPECT_EQ(CommentText(recovered->profile, "reason"), "exit");
}

// A process under heaprec run killed between emptying its ended record and handing it on leaves an
// empty record: heaprec recover says there is nothing in it, in one line.
TEST_F(EndingsTest, HeaprecRecoverSaysAnEmptyRecordHoldsNothing) {
  std::string dir = RunDirectory("empty");
  const std::string record = dir + "/p.123.record";
  std::ofstream(record).flush();
  RunResult recover = RunGuarded({HEAPREC_BIN, "recover", dir}, dir);
  EXPECT_EQ(recover.status, 1) << DescribeEnding(recover);
  EXPECT_EQ(recover.err, "heaprec recover: " + record + ": empty; its process had ended\n");
}

// Preloaded without heaprec run nobody would remove a spare: the record's file goes at the end.
TEST_F(EndingsTest, APreloadedProcessLeavesNeitherItsRecordNorASpare) {
  std::string dir = RunDirectory("preload");
  RunResult run = RunGuarded({REL_GROW, "exit", "40"}, dir, PreloadEnv(dir, false));
  EXPECT_EQ(run.status, 0) << DescribeEnding(run);
  EXPECT_NE(SaidRecordInode(run.out), 0u) << run.out;
  EXPECT_TRUE(RecordsIn(dir).empty());
  EXPECT_EQ(SparesIn(dir), std::vector<std::string>());
}

// The pages of `path` in the page cache.
long ResidentPages(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  void* map = fstat(fd, &st) == 0
                  ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return -1;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((static_cast<size_t>(st.st_size) + page - 1) / page);
  long count = -1;
  if (mincore(map, static_cast<size_t>(st.st_size), resident.data()) == 0) {
    count = 0;
    for (unsigned char r : resident) count += r & 1;
  }
  munmap(map, static_cast<size_t>(st.st_size));
  return count;
}

// Every page of the record a process first writes is a fault on a shared file mapping, and a page
// in the page cache that goes with the file: a process with a few dozen samples touches a dozen
// pages (the header, the first tables of all shards, which share five pages, a node chunk, the
// mapping log, the peak copies). It used to touch a page or two per shard, and each fault read
// ahead the pages after it: the whole 2 MiB file was in memory.
TEST_F(EndingsTest, ARecordOfAFewDozenSamplesTouchesAFewPages) {
  std::string dir = RunDirectory("preload");
  pid_t pid = -1;
  long resident = -1;
  RunResult run = Grow({REL_GROW, "48"}, dir, PreloadEnv(dir, false, {{"HEAPREC_SEED", "3"}}), &pid,
                       [&](pid_t program, BackgroundProcess& process) {
                         process.Send("go");
                         EXPECT_NE(process.WaitForLine("held"), "") << process.Stderr();
                         std::string record = dir + "/p." + std::to_string(program) + ".record";
                         EXPECT_TRUE(WaitUntil([&] { return std::filesystem::exists(record); }));
                         resident = ResidentPages(record);
                         EXPECT_EQ(kill(program, SIGKILL), 0);
                       });
  ASSERT_TRUE(WIFSIGNALED(run.wait_status) && WTERMSIG(run.wait_status) == SIGKILL)
      << DescribeEnding(run);
  EXPECT_GT(resident, 0) << "no record";
  EXPECT_LE(resident, 24);
}

// Without heaprec run, the record stays beside the profiles until `heaprec recover` reads it. The
// reader trusts nothing in the file: cut short anywhere, it reads what is there or says it cannot,
// and never crashes.
TEST_F(EndingsTest, HeaprecRecoverWritesTheHeapAtDeathOfAPreloadedProcess) {
  std::string dir = RunDirectory("preload");
  pid_t pid = -1;
  RunResult run = Grow({REL_GROW, "160"}, dir, PreloadEnv(dir, false, {{"HEAPREC_SEED", "11"}}),
                       &pid, KillSoonAfterGrowing);
  ASSERT_TRUE(WIFSIGNALED(run.wait_status) && WTERMSIG(run.wait_status) == SIGKILL)
      << DescribeEnding(run);
  std::string record = dir + "/p." + std::to_string(pid) + ".record";
  ASSERT_TRUE(std::filesystem::exists(record)) << DescribeEnding(run);

  std::string truncated_dir = RunDirectory("truncated");
  std::uintmax_t size = std::filesystem::file_size(record);
  for (int cut = 0; cut < 12; ++cut) {
    std::string copy = truncated_dir + "/cut" + std::to_string(cut) + ".record";
    std::filesystem::copy_file(record, copy);
    std::filesystem::resize_file(copy, size * static_cast<std::uintmax_t>(cut) / 12);
    RunResult read =
        RunGuarded({HEAPREC_BIN, "recover", "--keep", "-o", copy + ".pb.gz", copy}, truncated_dir);
    EXPECT_TRUE(read.status == 0 || read.status == 1) << cut << "/12: " << DescribeEnding(read);
    if (read.status == 1) {
      EXPECT_EQ(e2e::Lines(read.err).size(), 1u) << read.err;
    }
  }

  RunResult recover = RunGuarded({HEAPREC_BIN, "recover", dir}, dir);
  EXPECT_EQ(recover.status, 0) << DescribeEnding(recover);
  EXPECT_TRUE(Contains(recover.out, "process " + std::to_string(pid))) << recover.out;
  EXPECT_FALSE(std::filesystem::exists(record));
  SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, pid);
  ASSERT_NE(killed, nullptr) << recover.out << recover.err;
  ExpectHeld(killed->profile, BlocksHeld(160), "heap at death");

  RunResult again = RunGuarded({HEAPREC_BIN, "recover", dir}, dir);
  EXPECT_EQ(again.status, 1);
  EXPECT_TRUE(Contains(again.err, "no heap records")) << again.err;
  RunResult bad = RunGuarded({HEAPREC_BIN, "recover", killed->path}, dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "heaprec recover: " + killed->path + ": not a heaprec heap record\n");
}

// A peak that came and went faster than the peak profile is rewritten (at most once a second): the
// record's copy of the peak capture gives it, after SIGKILL. The in-memory copy is at least 1/1.1
// of the estimate at the peak, so within 5 sigma of 160 MiB / 1.1; the heap at death holds nothing
// of the burst.
TEST_F(EndingsTest, SigkillAfterABurstLeavesThePeakItReached) {
  std::string dir = RunDirectory("burst");
  pid_t pid = -1;
  RunResult run = Grow(UnderHeaprec(dir, {REL_GROW, "burst", "160"}, {"--seed", "3"}), dir, {},
                       &pid, [](pid_t p, BackgroundProcess& process) {
                         process.Send("go");
                         EXPECT_NE(process.WaitForLine("freed"), "") << process.Stderr();
                         EXPECT_EQ(kill(p, SIGKILL), 0);
                       });
  EXPECT_EQ(run.status, 137) << DescribeEnding(run);
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, pid);
  ASSERT_NE(killed, nullptr) << DescribeEnding(run);
  EXPECT_EQ(SiteValues(killed->profile, "grow_block").inuse_space, 0);
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir);
  ASSERT_EQ(peaks.size(), 1u);
  Truth truth = BlocksHeld(160);
  double site = static_cast<double>(SiteValues(peaks[0].profile, "grow_block").inuse_space);
  EXPECT_GE(site, (truth.bytes - truth.tolerance) / 1.1) << "the peak profile misses the burst";
  EXPECT_LE(site, truth.bytes + truth.tolerance);
  // The copy holds one entry per site (the burst is one), yet counts its objects: of at least
  // 160 / 1.1 blocks each sampled with probability 1 - e^-2, about 126 (sd 4), 100 is 6 sd short.
  EXPECT_GE(CommentValue(peaks[0].profile, "live_samples"), 100);
}

// A running process's record changes as it runs: recover leaves it alone.
TEST_F(EndingsTest, HeaprecRecoverRefusesTheRecordOfARunningProcess) {
  std::string dir = RunDirectory("running");
  pid_t pid = -1;
  Grow({REL_GROW, "4"}, dir, PreloadEnv(dir, false), &pid,
       [&](pid_t p, BackgroundProcess& process) {
         process.Send("go");
         EXPECT_NE(process.WaitForLine("held"), "");
         std::string record = dir + "/p." + std::to_string(p) + ".record";
         RunResult recover = RunGuarded({HEAPREC_BIN, "recover", record}, dir);
         EXPECT_EQ(recover.status, 1);
         EXPECT_TRUE(Contains(recover.err, "is still running")) << recover.err;
         EXPECT_TRUE(std::filesystem::exists(record));
         kill(p, SIGTERM);
       });
  EXPECT_TRUE(RecordsIn(dir).empty()) << "the final profile ends the record";
}

// The host pid of `parent`'s only child (/proc/PID/task/PID/children), or -1.
pid_t OnlyChildOf(pid_t parent) {
  std::ifstream children("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) +
                         "/children");
  long child = -1;
  return children >> child ? static_cast<pid_t>(child) : -1;
}

// A process in its own pid namespace (a container's, seen from the host) names its record by the
// pid it has there, which on the host is another process's (1: init). heaprec recover on the host
// leaves the record of the running process alone, and recovers it once the process is killed.
TEST_F(EndingsTest, HeaprecRecoverKnowsAProcessInAnotherPidNamespaceByItsRecord) {
  std::string dir = RunDirectory("pidns");
  pid_t inner = -1;
  RunResult run = Grow({"/usr/bin/unshare", "--pid", "--fork", "--mount-proc", REL_GROW, "4"}, dir,
                       PreloadEnv(dir, false, {{"HEAPREC_SEED", "5"}}), &inner,
                       [&](pid_t p, BackgroundProcess& process) {
                         ASSERT_EQ(p, 1)
                             << "rel_grow is not the first process of its pid namespace";
                         process.Send("go");
                         EXPECT_NE(process.WaitForLine("held"), "") << process.Stderr();
                         std::string record = dir + "/p.1.record";
                         RunResult refused = RunGuarded({HEAPREC_BIN, "recover", record}, dir);
                         EXPECT_EQ(refused.status, 1) << refused.out << refused.err;
                         EXPECT_TRUE(Contains(refused.err, "is still running")) << refused.err;
                         EXPECT_TRUE(std::filesystem::exists(record));
                         pid_t host = OnlyChildOf(process.pid());
                         ASSERT_GT(host, 1);
                         EXPECT_EQ(kill(host, SIGKILL), 0);
                       });
  EXPECT_FALSE(WIFEXITED(run.wait_status) && WEXITSTATUS(run.wait_status) == 0)
      << DescribeEnding(run);
  RunResult recover = RunGuarded({HEAPREC_BIN, "recover", dir + "/p.1.record"}, dir);
  EXPECT_EQ(recover.status, 0) << DescribeEnding(recover);
  SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, 1);
  ASSERT_NE(killed, nullptr) << recover.out << recover.err;
  ExpectHeld(killed->profile, BlocksHeld(4), "heap at death");
}

// A program that leaves a process running behind it (a daemon: here a rel_grow in a session of
// its own, holding 4 MiB, which the program waits to have its heap record): heaprec run does not
// wait for it, and names it with where its profiles will go; it said "no profile was written (was
// the program killed by SIGKILL ...)". The process then writes its profile when it ends.
TEST_F(EndingsTest, HeaprecRunNamesTheProcessItsProgramLeftRunning) {
  std::string dir = RunDirectory("daemon");
  const std::string said = dir + "/daemon.out";
  RunResult run = HeaprecRunGuarded(
      dir, {"--no-symbolize"},
      {"/bin/sh", "-c",
       "echo go | setsid \"$0\" 4 > \"$1\" 2>&1 & "
       "until grep -q held \"$1\" && ls \"$2\"/*.record > /dev/null 2>&1; do sleep 0.02; done",
       REL_GROW, said, dir});
  std::ifstream said_file(said);
  std::string ready;
  std::getline(said_file, ready);
  const pid_t daemon = static_cast<pid_t>(std::atol(ready.substr(ready.find(' ') + 1).c_str()));
  ASSERT_GT(daemon, 0) << ready;
  EXPECT_EQ(run.status, 0) << DescribeEnding(run);
  EXPECT_TRUE(Contains(run.err, "heaprec: process " + std::to_string(daemon) +
                                    " (rel_grow) still runs, left behind by the program: it "
                                    "writes its profiles to " +
                                    dir + " when it ends (heaprec dump " + std::to_string(daemon) +
                                    " writes one now)\n"))
      << run.err;
  EXPECT_FALSE(Contains(run.err, "no profile was written")) << run.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/p." + std::to_string(daemon) + ".record"))
      << "the running process's record is its own";
  EXPECT_EQ(kill(daemon, SIGTERM), 0);
  const std::string profile = dir + "/p." + std::to_string(daemon) + ".pb.gz";
  for (int i = 0; i < 500 && !std::filesystem::exists(profile); ++i) usleep(20 * 1000);
  SymbolizeAll(dir);  // heaprec run, which would have, had ended
  std::optional<ProfileFile> written = ReadValidProfile(profile);
  ASSERT_TRUE(written.has_value());
  ExpectHeld(written->profile, BlocksHeld(4), "at its end");
}

// A memory cgroup with a limit, for the OOM killer: cgroup v2 where the memory controller is
// enabled, else v1's memory hierarchy. Removed when the test ends.
class MemoryLimitedGroup {
 public:
  explicit MemoryLimitedGroup(long long limit_bytes) {
    std::string name = "heaprec-oom-" + std::to_string(getpid());
    for (const auto& [root, limit_file] :
         {std::pair<std::string, std::string>{"/sys/fs/cgroup", "memory.max"},
          {"/sys/fs/cgroup/memory", "memory.limit_in_bytes"}}) {
      std::string dir = root + "/" + name;
      if (!std::filesystem::exists(root + "/cgroup.procs")) continue;
      std::error_code ec;
      std::filesystem::create_directory(dir, ec);
      if (!std::filesystem::exists(dir + "/" + limit_file)) {
        std::filesystem::remove(dir, ec);
        continue;
      }
      std::ofstream(dir + "/" + limit_file) << limit_bytes;
      dir_ = dir;
      return;
    }
  }
  ~MemoryLimitedGroup() {
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  const std::string& dir() const { return dir_; }
  bool Add(pid_t pid) const {
    std::ofstream procs(dir_ + "/cgroup.procs");
    procs << pid;
    procs.flush();
    return procs.good();
  }

 private:
  std::string dir_;
};

// The kernel kills the program when its memory reaches the group's limit: the profile holds what it
// held then, its last "grown K" (within sampling, and one block in flight).
TEST_F(EndingsTest, OomKillUnderACgroupLimitLeavesTheHeapAtDeath) {
  MemoryLimitedGroup group(192ll << 20);
  ASSERT_NE(group.dir(), "") << "no memory cgroup could be made (needs root and cgroup v1 or v2)";
  std::string dir = RunDirectory("oom");
  pid_t pid = -1;
  RunResult run = Grow(UnderHeaprec(dir, {REL_GROW, "forever"}, {"--seed", "5"}), dir, {}, &pid,
                       [&](pid_t p, BackgroundProcess& process) {
                         ASSERT_TRUE(group.Add(p));
                         process.Send("go");
                       });
  EXPECT_EQ(run.status, 137) << DescribeEnding(run);
  long held = LastGrown(run.out);
  EXPECT_GT(held, 100) << "the limit is 192 MiB: " << DescribeEnding(run);
  ProfileSet profiles = ReadProfiles(dir);
  const ProfileFile* killed = KilledProfile(profiles, pid);
  ASSERT_NE(killed, nullptr) << DescribeEnding(run);
  Truth truth = BlocksHeld(held);
  truth.tolerance += kBlock;  // the block being allocated when the killer came
  ExpectHeld(killed->profile, truth, "heap at the OOM kill");
}

}  // namespace
}  // namespace heaprec::reliability
