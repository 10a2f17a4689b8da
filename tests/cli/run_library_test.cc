// `heaprec run`'s preload library: HEAPREC_LIBRARY is checked before the program runs (a path the
// dynamic loader cannot preload only makes it warn and run the program unprofiled), and a heaprec
// that finds no library names the paths it tried. Each failure is one line and the program never
// runs.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "heaprec_command_fixture.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using test_support::ShellQuote;

class RunLibraryTest : public HeaprecCommandTest {
 protected:
  void SetUp() override {
    HeaprecCommandTest::SetUp();
    marker_ = dir_ + "/ran";
  }

  // `heaprec run -- touch MARKER` with HEAPREC_LIBRARY=library; `env -u HEAPREC_LIBRARY` with
  // std::nullopt.
  int Run(const std::optional<std::string>& library, std::string* output,
          const std::string& heaprec = HEAPREC_BINARY) {
    std::string env =
        library ? "HEAPREC_LIBRARY=" + ShellQuote(*library) + " " : "env -u HEAPREC_LIBRARY ";
    return test_support::RunCommand(env + ShellQuote(heaprec) + " run -o " +
                                        ShellQuote(dir_ + "/p.%p.pb.gz") + " -- touch " +
                                        ShellQuote(marker_),
                                    output);
  }

  // A copy of the real library with the ELF header's field at `offset` (two bytes) set to `value`.
  std::string PatchedLibrary(size_t offset, uint16_t value) {
    std::ifstream in(HEAPREC_PRELOAD_LIBRARY, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(std::min<size_t>(bytes.size(), 4096));
    bytes[offset] = static_cast<char>(value & 0xff);
    bytes[offset + 1] = static_cast<char>(value >> 8);
    std::string path = dir_ + "/patched" + std::to_string(offset) + ".so";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  void ExpectRejected(const std::string& library, const std::string& problem) {
    std::string out;
    EXPECT_EQ(Run(library, &out), 2) << library << "\n" << out;
    EXPECT_EQ(out, "heaprec run: HEAPREC_LIBRARY=" + library + ": " + problem + "\n");
    EXPECT_FALSE(std::filesystem::exists(marker_)) << "the program must not run";
  }

  std::string marker_;
};

TEST_F(RunLibraryTest, MissingFile) { ExpectRejected(dir_ + "/libheaprec.so", "no such file"); }

TEST_F(RunLibraryTest, Directory) { ExpectRejected(dir_, "not a regular file"); }

TEST_F(RunLibraryTest, NotElf) {
  std::ofstream(dir_ + "/text.so") << "not a library\n";
  ExpectRejected(dir_ + "/text.so", "not an ELF file");
}

TEST_F(RunLibraryTest, AnotherMachine) {
  ExpectRejected(PatchedLibrary(offsetof(Elf64_Ehdr, e_machine), EM_AARCH64),
                 "built for another machine");
}

TEST_F(RunLibraryTest, NotASharedObject) {
  ExpectRejected(PatchedLibrary(offsetof(Elf64_Ehdr, e_type), ET_REL), "not a shared object");
}

TEST_F(RunLibraryTest, TheRealLibraryRunsTheProgram) {
  std::string out;
  EXPECT_EQ(Run(HEAPREC_PRELOAD_LIBRARY, &out), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(marker_)) << out;
}

TEST_F(RunLibraryTest, EmptyIsUnset) {
  std::string out;
  EXPECT_EQ(Run("", &out), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(marker_)) << "the build tree's library is used: " << out;
}

// A heaprec copied where neither the installed nor the build tree's library is: it names both.
TEST_F(RunLibraryTest, NoLibraryFoundNamesThePathsTried) {
  std::filesystem::create_directories(dir_ + "/prefix/bin");
  std::string heaprec = dir_ + "/prefix/bin/heaprec";
  std::filesystem::copy_file(HEAPREC_BINARY, heaprec);
  std::filesystem::permissions(heaprec, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  std::string out;
  EXPECT_EQ(Run(std::nullopt, &out, heaprec), 1) << out;
  std::string prefix = std::filesystem::canonical(dir_ + "/prefix").string();
  EXPECT_EQ(out, "heaprec run: cannot find libheaprec.so (tried " + prefix + "/" +
                     HEAPREC_PRELOAD_INSTALL_DIR + "/libheaprec.so, " + prefix +
                     "/lib/libheaprec.so); set HEAPREC_LIBRARY to its path\n");
  EXPECT_FALSE(std::filesystem::exists(marker_));
}

}  // namespace
}  // namespace heaprec
