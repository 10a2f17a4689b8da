// The base fixture of the tests that run the real heaprec executable (HEAPREC_BINARY) on profiles
// they write: a fresh private directory per test, the profiles written into it as the commands
// write theirs (render/output_file.h), and heaprec run through the shell with its output captured.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "profile/profile.h"
#include "render/output_file.h"
#include "test_profiles.h"

namespace heaprec {

class HeaprecCommandTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_support::MakeTempDir(); }

  // Writes `profile` to <dir>/NAME; returns its path.
  std::string WriteProfile(const std::string& name, const profile::Profile& profile) {
    std::string path = dir_ + "/" + name;
    render::WriteProfileFile(profile, path);
    return path;
  }

  // `heaprec ARGS`, ARGS already quoted for the shell: the exit status, stdout and stderr in
  // `output`.
  int Heaprec(const std::string& args, std::string* output) {
    return test_support::RunCommand(test_support::ShellQuote(HEAPREC_BINARY) + " " + args, output);
  }

  std::string dir_;
};

}  // namespace heaprec
