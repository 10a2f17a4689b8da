// The fixture shared by the e2e tests: a fresh directory per test, and a helper that runs a
// workload both plainly and under `heaprec run` and checks that profiling changed nothing the
// program shows.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "e2e_util.h"
#include "profile/pprof_reader.h"

namespace heaprec::e2e {

using namespace ::heaprec::profile;

class E2eTest : public ::testing::Test {
 protected:
  // Runs `program` unprofiled (in <dir>/plain) and under `heaprec run FLAGS` (in <dir>, profiles
  // to <dir>/p.%p.pb.gz). Expects both to exit with `status` and print the same stdout. Returns
  // the profiled run.
  RunResult Profiled(const std::vector<std::string>& flags, const std::vector<std::string>& program,
                     int status = 0) {
    std::string plain_dir = dir_ / "plain";
    std::filesystem::create_directories(plain_dir);
    RunResult plain = RunProgram(program, plain_dir);
    EXPECT_EQ(plain.status, status) << "unprofiled run; stderr:\n" << plain.err;
    RunResult profiled = HeaprecRun(dir_.path(), flags, program);
    EXPECT_EQ(profiled.status, status) << "profiled run; stderr:\n" << profiled.err;
    EXPECT_EQ(profiled.out, plain.out) << "profiling changed the program's stdout";
    return profiled;
  }

  // The profiles written to the test directory (peak-heap profiles apart).
  std::vector<std::string> Profiles() const { return ListProfiles(dir_.path()); }
  std::vector<std::string> PeakProfiles() const { return ListProfiles(dir_.path(), true); }

  // The only profile in the test directory (fails the test if there is not exactly one).
  Profile OnlyProfile() {
    std::vector<std::string> files = Profiles();
    EXPECT_EQ(files.size(), 1u);
    if (files.empty()) throw std::runtime_error("no profile written");
    return ReadProfileFile(files[0]);
  }

  TempDir dir_;
};

}  // namespace heaprec::e2e
