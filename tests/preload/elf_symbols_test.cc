// What the HTTP endpoint names addresses with, inside the profiled process: the reader of ELF
// symbol tables (preload/http/elf_symbols.h) on this test's own executable, whole, truncated at
// every length class and with its headers damaged (no crash, no read outside the file, names
// without control characters), and the parser of /debug/pprof/symbol's "0xADDR+0xADDR" queries
// (preload/http/symbol_query.h), fed whole and byte by byte.
#include "preload/http/elf_symbols.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "preload/http/symbol_query.h"

extern "C" __attribute__((noinline, used)) int heaprec_elf_symbols_test_target(int x) {
  return x * 3 + 1;
}

namespace heaprec::test_support {
namespace {

using preload::ElfSymbolFile;
using preload::SymbolMatch;
using preload::SymbolQueryParser;

// The main executable's load bias, to turn a function's address into its file's virtual address.
std::uintptr_t ExecutableBias() {
  std::uintptr_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {
          *static_cast<std::uintptr_t*>(data) = info->dlpi_addr;
          return 1;
        }
        return 0;
      },
      &bias);
  return bias;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ElfSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bytes_ = ReadAll("/proc/self/exe");
    ASSERT_GT(bytes_.size(), 4096u);
    target_ = reinterpret_cast<std::uintptr_t>(&heaprec_elf_symbols_test_target) -
              ExecutableBias() + 1;  // inside the function, not at its start
  }

  // The name `bytes` as a file give `target_`, "" for none (and a failure for a bad name).
  std::string NameIn(const std::string& bytes) {
    char path[] = "/tmp/heaprec-elf-XXXXXX";
    int fd = mkstemp(path);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    unlink(path);
    ElfSymbolFile file;
    std::string name;
    if (file.Open(fd)) {
      char build_id[41];
      file.BuildId(build_id);
      EXPECT_LT(std::strlen(build_id), sizeof(build_id));
      SymbolMatch match;
      file.Match(&target_, 1, &match);
      char text[64];
      if (file.Name(match, text, sizeof(text))) {
        name = text;
        EXPECT_LT(name.size(), sizeof(text));
        for (char c : name) EXPECT_GE(static_cast<unsigned char>(c), ' ') << name;
      }
    }
    close(fd);
    return name;
  }

  std::string bytes_;
  std::uint64_t target_ = 0;
};

TEST_F(ElfSymbolsTest, NamesAFunctionOfItsOwnExecutable) {
  EXPECT_EQ(NameIn(bytes_), "heaprec_elf_symbols_test_target");
  // Addresses outside every function, and several at once (sorted), each its own answer.
  ElfSymbolFile file;
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_TRUE(file.Open(fd));
  std::uint64_t vaddrs[] = {0, target_ - 1, target_, ~0ull};
  SymbolMatch matches[4];
  file.Match(vaddrs, 4, matches);
  EXPECT_FALSE(matches[0].found);
  EXPECT_TRUE(matches[1].found);
  EXPECT_TRUE(matches[2].found);
  EXPECT_EQ(matches[1].name_offset, matches[2].name_offset);
  EXPECT_FALSE(matches[3].found);
  char name[8];
  ASSERT_TRUE(file.Name(matches[1], name, sizeof(name)));
  EXPECT_STREQ(name, "heaprec");  // cut to the buffer
  close(fd);
}

TEST_F(ElfSymbolsTest, TruncatedFilesNameNothingOrTheRightThing) {
  int named = 0;
  for (std::size_t size = 0; size < bytes_.size(); size += 1 + size / 8) {
    std::string name = NameIn(bytes_.substr(0, size));
    EXPECT_TRUE(name.empty() || name == "heaprec_elf_symbols_test_target") << size << ": " << name;
    named += !name.empty();
  }
  EXPECT_EQ(NameIn(bytes_.substr(0, 16)), "");
  EXPECT_EQ(named, 0) << "the section headers are at the end: a truncated file has none";
}

TEST_F(ElfSymbolsTest, DamagedHeadersNeverCrash) {
  // The ELF header and the section headers (at its end) are what the reader trusts least.
  std::uint64_t section_headers = 0;
  std::memcpy(&section_headers, bytes_.data() + offsetof(Elf64_Ehdr, e_shoff), 8);
  ASSERT_LT(section_headers, bytes_.size());
  std::mt19937_64 random(42);
  int still_named = 0;
  for (int round = 0; round < 300; ++round) {
    std::string damaged = bytes_;
    for (int flip = 0; flip < 4; ++flip) {
      std::size_t at = random() % 2 == 0
                           ? random() % sizeof(Elf64_Ehdr)
                           : section_headers + random() % (bytes_.size() - section_headers);
      damaged[at] = static_cast<char>(random());
    }
    std::string name = NameIn(damaged);
    still_named += name == "heaprec_elf_symbols_test_target";
  }
  EXPECT_GT(still_named, 0) << "some damage leaves the symbol table readable";
}

std::vector<std::uint64_t> ParseQuery(const std::string& query, bool byte_by_byte) {
  SymbolQueryParser parser;
  std::vector<std::uint64_t> addresses;
  std::uint64_t out[2];
  std::size_t count = 0;
  const std::size_t step = byte_by_byte ? 1 : query.size();
  for (std::size_t at = 0; at < query.size();) {
    std::size_t n = std::min(step, query.size() - at);
    at += parser.Feed(query.data() + at, n, out, 2, &count);
    addresses.insert(addresses.end(), out, out + count);
    count = 0;
  }
  std::uint64_t last;
  if (parser.Finish(&last)) addresses.push_back(last);
  return addresses;
}

TEST(SymbolQueryTest, ReadsGoFormsAndSkipsWhatGoSkips) {
  for (bool byte_by_byte : {false, true}) {
    EXPECT_EQ(ParseQuery("0x7f00aa+0X10+42+0xffffffffffffffff", byte_by_byte),
              (std::vector<std::uint64_t>{0x7f00aa, 0x10, 42, ~0ull}));
    // 0, not numbers, too large, empty words: skipped, as strconv.ParseUint's errors are.
    EXPECT_EQ(ParseQuery("0+0x+zz+0x10000000000000000+18446744073709551616++0x1 +" +
                             std::string(100, '1') + "+7",
                         byte_by_byte),
              (std::vector<std::uint64_t>{7}));
    EXPECT_TRUE(ParseQuery("", byte_by_byte).empty());
  }
}

}  // namespace
}  // namespace heaprec::test_support
