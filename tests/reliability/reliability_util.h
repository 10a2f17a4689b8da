// Helpers for the reliability scenarios (tests/reliability): running programs with a hang guard,
// with and without heaprec, and checking that every profile left behind is valid.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../e2e/e2e_util.h"
#include "profile/profile.h"

namespace heaprec::reliability {

using namespace ::heaprec::profile;

using e2e::EnvChanges;
using e2e::RunResult;
using e2e::TempDir;

using e2e::kHung;

// e2e::RunProgram with its hang guard on (`timeout_s` seconds, status kHung when it fires).
RunResult RunGuarded(const std::vector<std::string>& argv, const std::string& cwd,
                     const EnvChanges& env = {}, int timeout_s = 120);

// `heaprec run -o <dir>/p.%p.pb.gz FLAGS -- PROGRAM...` in `dir`, guarded.
RunResult HeaprecRunGuarded(const std::string& dir, const std::vector<std::string>& flags,
                            const std::vector<std::string>& program, const EnvChanges& env = {},
                            int timeout_s = 120);

// `PROGRAM...` with LD_PRELOAD=libheaprec.so and HEAPREC_OUTPUT=<dir>/p.%p.pb.gz plus `env`, in
// `dir`, guarded.
RunResult PreloadRunGuarded(const std::string& dir, const std::vector<std::string>& program,
                            const EnvChanges& env = {}, int timeout_s = 120);

using e2e::Lines;

// `text` without the lines heaprec run prints at the end (everything from "heaprec: wrote" or
// "heaprec: no profile was written" on) and without any other line starting with "heaprec".
std::string WithoutHeaprecLines(const std::string& text);

// Every profile file in a directory, read and checked.
struct ProfileFile {
  std::string path;
  int64_t pid = -1;
  std::string reason;  // the "reason=" comment
  Profile profile;
};
struct ProfileSet {
  // Every valid profile except peak-heap profiles (reason=peak), which processes write beside
  // their exit profile: the scenarios count exit, interval and signal profiles.
  std::vector<ProfileFile> files;
  std::vector<ProfileFile> peak_files;  // validated the same way
  size_t all_files = 0;                 // files + peak_files
  // pid -> index in `files` of the exit profile of that process (reason=exit).
  std::map<int64_t, size_t> exit_profiles;
  // pid -> index in `files` of the final profile of that process, however it ended (reason=exit,
  // _exit, crash or terminated).
  std::map<int64_t, size_t> final_profiles;
  int Count(const std::string& reason) const;
  // The exit profile of `pid` (fails the test and throws if there is none).
  const Profile& ExitProfile(int64_t pid) const;
};

// The profile at `path` with its path and pid comment, or (a gtest failure) nullopt if it is not
// a valid profile.
std::optional<ProfileFile> ReadValidProfile(const std::string& path);

// The reasons of a process's last profile: exit, _exit, crash, terminated, killed.
bool IsFinalReason(const std::string& reason);

// Reads every "*.pb.gz" in `dir` with heaprec::ReadProfileFile and checks (as gtest failures):
// each is readable, carries one `pid=` and one `reason=` comment field and opens with the `heaprec`
// version, final profiles are named p.<pid>.pb.gz after their own pid comment, no two final
// profiles share a pid, and no temporary file (`*.tmp.*`) is left in the directory.
ProfileSet ReadProfiles(const std::string& dir);

// The peak profiles (NAME.peak.pb.gz) in `dir`, read and checked like ReadProfiles checks the
// others: readable, one pid= and reason=peak comment, named p.<pid>.peak.pb.gz. (ReadProfiles
// lists the directory without them: its peak_files holds only peak profiles with other names.)
std::vector<ProfileFile> ReadPeakProfiles(const std::string& dir);

// Whether the run was killed by the hang guard (and a message saying so for gtest).
std::string Describe(const RunResult& run);

// Comment fields (see e2e::CommentValues), and the values summed over the samples whose stack
// contains `function` (see e2e::SiteValues).
using e2e::CommentText;
using e2e::CommentValue;
using e2e::SiteValues;
using e2e::Values;

// Values summed over the samples whose stack contains `function` and whose `bytes` label is
// `size`; with an empty `function`, over every sample of that size.
Values SiteValuesOfSize(const Profile& profile, const std::string& function, int64_t size);

// The deepest stack in the profile, in locations.
size_t MaxStackDepth(const Profile& profile);

// Copies a file (mode kept), for tests that strip, delete or chmod their own copy of a binary.
void CopyFile(const std::string& from, const std::string& to);

// The fixture: a fresh temporary directory, and a helper comparing a plain and a profiled run.
class ReliabilityTest : public ::testing::Test {
 protected:
  // Runs `program` unprofiled (in <dir>/plain) then under `heaprec run FLAGS` (in <dir>, profiles
  // to <dir>/p.%p.pb.gz), and expects: neither hung, both exit with `status`, same stdout, and
  // stderr identical once heaprec's own lines are removed. Returns the profiled run.
  // `env` applies to both runs (e.g. LD_PRELOAD of another allocator, which heaprec run keeps
  // after its own library).
  RunResult CompareWithHeaprec(const std::vector<std::string>& flags,
                               const std::vector<std::string>& program, int status = 0,
                               int timeout_s = 120, const EnvChanges& env = {});
  // The same with LD_PRELOAD and HEAPREC_* variables `env` instead of `heaprec run`; stderr must be
  // identical (the library prints nothing unless something is wrong).
  RunResult CompareWithPreload(const EnvChanges& env, const std::vector<std::string>& program,
                               int status = 0, int timeout_s = 120);

  std::string dir() const { return dir_.path(); }
  std::string operator/(const std::string& name) const { return dir_ / name; }

  TempDir dir_;
};

}  // namespace heaprec::reliability
