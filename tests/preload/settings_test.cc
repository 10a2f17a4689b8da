#include "preload/control/settings.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

namespace heaprec::preload {
namespace {

TEST(SettingsTest, ByteCounts) {
  std::uint64_t v = 0;
  EXPECT_TRUE(ParseByteCount("1", &v));
  EXPECT_EQ(v, 1u);
  EXPECT_TRUE(ParseByteCount("524288", &v));
  EXPECT_EQ(v, 524288u);
  EXPECT_TRUE(ParseByteCount("512K", &v));
  EXPECT_EQ(v, 524288u);
  EXPECT_TRUE(ParseByteCount("2MiB", &v));
  EXPECT_EQ(v, 2u << 20);
  EXPECT_TRUE(ParseByteCount("1g", &v));
  EXPECT_EQ(v, 1u << 30);
  for (const char* bad :
       {"", "0", "abc", "12x", "-5", "1.5M", "99999999999999999999", "16777216T", "2M "}) {
    EXPECT_FALSE(ParseByteCount(bad, &v)) << bad;
  }
}

TEST(SettingsTest, Seconds) {
  std::uint64_t ms = 0;
  EXPECT_TRUE(ParseSeconds("10", &ms));
  EXPECT_EQ(ms, 10000u);
  EXPECT_TRUE(ParseSeconds("0.25", &ms));
  EXPECT_EQ(ms, 250u);
  EXPECT_TRUE(ParseSeconds("3s", &ms));
  EXPECT_EQ(ms, 3000u);
  for (const char* bad : {"", "x", "1.", "-1", "1e3", "99999999999"})
    EXPECT_FALSE(ParseSeconds(bad, &ms)) << bad;
}

TEST(SettingsTest, Signals) {
  int s = 0;
  EXPECT_TRUE(ParseSignal("SIGUSR2", &s));
  EXPECT_EQ(s, SIGUSR2);
  EXPECT_TRUE(ParseSignal("usr1", &s));
  EXPECT_EQ(s, SIGUSR1);
  EXPECT_TRUE(ParseSignal("12", &s));
  EXPECT_EQ(s, 12);
  for (const char* bad : {"", "SIGFOO", "SIGKILL", "9", "0", "65", "USR2x"})
    EXPECT_FALSE(ParseSignal(bad, &s)) << bad;
}

class ReadSettingsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const SettingRow& row : AllSettings()) unsetenv(row.variable);
  }
};

TEST_F(ReadSettingsTest, DefaultsWithoutEnvironment) {
  Settings s;
  ASSERT_TRUE(ReadSettings(&s));
  EXPECT_EQ(s.sample_interval, 512u * 1024);
  EXPECT_STREQ(s.output_template, kDefaultOutputTemplate);
  EXPECT_EQ(s.max_depth, 128u);
  EXPECT_EQ(s.dump_interval_ms, 0u);
  EXPECT_EQ(s.dump_signal, 0);
  EXPECT_FALSE(s.no_follow);
  EXPECT_FALSE(s.dormant);
}

TEST_F(ReadSettingsTest, EveryVariableIsRead) {
  setenv("HEAPREC_SAMPLE_INTERVAL", "1", 1);
  setenv("HEAPREC_OUTPUT", "/tmp/x.%p.pb.gz", 1);
  setenv("HEAPREC_DUMP_INTERVAL", "1.5", 1);
  setenv("HEAPREC_DUMP_SIGNAL", "SIGUSR2", 1);
  setenv("HEAPREC_MAX_DEPTH", "64", 1);
  setenv("HEAPREC_UNWIND", "fp", 1);
  setenv("HEAPREC_NO_FOLLOW", "4242", 1);
  setenv("HEAPREC_SEED", "99", 1);
  setenv("HEAPREC_DORMANT", "1", 1);
  Settings s;
  ASSERT_TRUE(ReadSettings(&s));
  EXPECT_EQ(s.sample_interval, 1u);
  EXPECT_STREQ(s.output_template, "/tmp/x.%p.pb.gz");
  EXPECT_EQ(s.dump_interval_ms, 1500u);
  EXPECT_EQ(s.dump_signal, SIGUSR2);
  EXPECT_EQ(s.max_depth, 64u);
  EXPECT_EQ(s.unwind, UnwindMethod::kFramePointers);
  EXPECT_TRUE(s.no_follow);
  EXPECT_EQ(s.only_pid, 4242);
  EXPECT_EQ(s.seed, 99u);
  EXPECT_TRUE(s.dormant);
}

// Attach and detach arrive on the dump signal: dormant without one is a bad setting.
TEST_F(ReadSettingsTest, DormantNeedsADumpSignal) {
  setenv("HEAPREC_DORMANT", "1", 1);
  Settings s;
  testing::internal::CaptureStderr();
  EXPECT_FALSE(ReadSettings(&s));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("HEAPREC_DORMANT='1' is invalid: expected 1 only together with "
                     "HEAPREC_DUMP_SIGNAL"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  setenv("HEAPREC_DORMANT", "0", 1);
  Settings off;
  EXPECT_TRUE(ReadSettings(&off));
  EXPECT_FALSE(off.dormant);
}

TEST_F(ReadSettingsTest, BadValuesAreRejectedWithTheirName) {
  const std::pair<const char*, const char*> cases[] = {{"HEAPREC_SAMPLE_INTERVAL", "abc"},
                                                       {"HEAPREC_DUMP_INTERVAL", "soon"},
                                                       {"HEAPREC_DUMP_SIGNAL", "SIGNOPE"},
                                                       {"HEAPREC_MAX_DEPTH", "0"},
                                                       {"HEAPREC_MAX_DEPTH", "5000"},
                                                       {"HEAPREC_UNWIND", "magic"},
                                                       {"HEAPREC_NO_FOLLOW", "maybe"},
                                                       {"HEAPREC_OUTPUT", ""},
                                                       {"HEAPREC_SEED", "-1"},
                                                       {"HEAPREC_DORMANT", "sometimes"}};
  for (const auto& [name, value] : cases) {
    setenv(name, value, 1);
    Settings s;
    testing::internal::CaptureStderr();
    EXPECT_FALSE(ReadSettings(&s)) << name << "=" << value;
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(name), std::string::npos) << err;
    EXPECT_NE(err.find("expected"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    unsetenv(name);
  }
}

// The table is what the library and `heaprec run` share: one row per variable and per flag, each
// saying what it accepts; a switch takes 1 and 0 (the CLI exports a given switch as 1).
TEST(SettingTableTest, RowsAreWellFormedAndUnique) {
  std::set<std::string> variables, flags;
  for (const SettingRow& row : AllSettings()) {
    EXPECT_EQ(std::string(row.variable).rfind("HEAPREC_", 0), 0u) << row.variable;
    EXPECT_TRUE(variables.insert(row.variable).second) << row.variable << " twice";
    if (row.run_flag != nullptr) {
      EXPECT_EQ(std::string(row.run_flag).rfind("--", 0), 0u) << row.run_flag;
      EXPECT_TRUE(flags.insert(row.run_flag).second) << row.run_flag << " twice";
      EXPECT_EQ(FindSettingByFlag(row.run_flag), &row);
    }
    EXPECT_NE(row.readers, 0) << row.variable;
    EXPECT_GT(std::strlen(row.expected), 0u) << row.variable;
    // Switches take 1 and 0; HEAPREC_RUNTIME, set by heaprec alone, names a runtime.
    if (row.value_name == nullptr && std::strcmp(row.variable, "HEAPREC_RUNTIME") != 0) {
      Settings scratch;
      const char* detail = nullptr;
      EXPECT_TRUE(row.parse("1", &scratch, &detail)) << row.variable;
      EXPECT_TRUE(row.parse("0", &scratch, &detail)) << row.variable;
    }
  }
  EXPECT_EQ(FindSettingByFlag("--no-such-flag"), nullptr);
  EXPECT_GE(variables.size(), 15u);
}

// Values `heaprec run` used to refuse although the library took them, and the reverse: the two now
// read every value through the same row.
TEST_F(ReadSettingsTest, CaseAndOffValuesAsTheCliTakesThem) {
  setenv("HEAPREC_UNWIND", "DWARF", 1);
  setenv("HEAPREC_DUMP_ABOVE", "0", 1);
  setenv("HEAPREC_QUIET", "1", 1);
  Settings s;
  ASSERT_TRUE(ReadSettings(&s));
  EXPECT_EQ(s.unwind, UnwindMethod::kDwarf);
  EXPECT_EQ(s.dump_above, 0u);
  EXPECT_TRUE(s.quiet);
  setenv("HEAPREC_DUMP_ABOVE", "2G", 1);
  ASSERT_TRUE(ReadSettings(&s));
  EXPECT_EQ(s.dump_above, std::uint64_t{2} << 30);
}

}  // namespace
}  // namespace heaprec::preload
