// heaprec's own CFI walker against libgcc's unwinder on real programs, in exact mode: with
// --unwind check every sampled stack is walked by both in the same process, and they must agree
// address for address. These programs run the distribution's optimized code (libpython, cc1plus,
// perl, libc, the loader), mostly without frame pointers, so the frame kinds their compilers emit
// are all compared against the reference.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class UnwindAgreementTest : public ReliabilityTest {
 protected:
  // Runs `program` in exact mode with --unwind check: every sample is walked by libgcc and by the
  // CFI walker, and each process's final profile counts the walks that differed.
  void ExpectAgreement(const std::vector<std::string>& program, const EnvChanges& env = {}) {
    RunResult r = HeaprecRunGuarded(
        dir(), {"--no-symbolize", "--quiet", "--sample-interval", "1", "--unwind", "check"},
        program, env);
    ASSERT_EQ(r.status, 0) << Describe(r);
    ProfileSet set = ReadProfiles(dir());
    ASSERT_FALSE(set.files.empty());
    int64_t checked = 0, handed_over = 0;
    for (const ProfileFile& file : set.files) {
      SCOPED_TRACE(file.path);
      EXPECT_EQ(CommentValue(file.profile, "unwind_mismatches"), 0);
      int64_t samples = CommentValue(file.profile, "samples");
      EXPECT_EQ(CommentValue(file.profile, "unwind_checks"), samples);
      checked += samples;
      handed_over += CommentValue(file.profile, "unwind_handovers");
    }
    EXPECT_GT(checked, 1000);
    // Signal frames and CFA expressions are rare in these programs: nearly every stack is the
    // walker's own.
    EXPECT_LT(handed_over * 100, checked);
  }
};

TEST_F(UnwindAgreementTest, Python) {
  ExpectAgreement(
      {"/usr/bin/python3", "-c", "import json; print(len(json.dumps(list(range(1000)))))"},
      {{"PYTHONHASHSEED", "0"}});
}

TEST_F(UnwindAgreementTest, CompilerDriverAndCc1plus) {
  std::ofstream(dir() + "/t.cc")
      << "#include <map>\n#include <string>\n#include <vector>\n"
         "std::map<std::string, std::vector<int>> m;\n"
         "int f() { m[\"a\"].push_back(1); return static_cast<int>(m.size()); }\n";
  ExpectAgreement({"g++", "-O2", "-c", dir() + "/t.cc", "-o", dir() + "/t.o"});
}

TEST_F(UnwindAgreementTest, Perl) {
  ExpectAgreement({"perl", "-e", "my %h; $h{$_} = [$_ x 3] for 1..2000; print scalar(keys %h)"},
                  {{"PERL_HASH_SEED", "0"}, {"PERL_PERTURB_KEYS", "0"}});
}

}  // namespace
}  // namespace heaprec::reliability
