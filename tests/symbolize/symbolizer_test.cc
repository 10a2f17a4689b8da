// Symbolization of real addresses in a program built with -g -O2: function names (demangled),
// files, lines, inlined frames in pprof order, build-id checks, and idempotence.
#include "symbolize/symbolizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "profile/pprof_writer.h"
#include "render/output_file.h"
#include "symbolize/elf_file.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::render;
using namespace ::heaprec::symbolize;

// What the target program printed about itself.
struct TargetRun {
  uint64_t build_pc = 0, inlined_pc = 0;
  int build_line = 0, inlined_line = 0, outer_line = 0, decl_line = 0;
  std::vector<Mapping> mappings;  // its executable segments
};

TargetRun RunTarget(const std::string& path) {
  TargetRun run;
  std::string out;
  EXPECT_EQ(test_support::RunCommand(test_support::ShellQuote(path), &out), 0) << out;
  std::istringstream lines(out);
  std::string tag;
  while (lines >> tag) {
    if (tag == "build") {
      lines >> std::hex >> run.build_pc >> std::dec >> run.build_line >> run.outer_line;
    } else if (tag == "inlined") {
      lines >> std::hex >> run.inlined_pc >> std::dec >> run.inlined_line >> run.outer_line;
    } else if (tag == "decl") {
      lines >> run.decl_line;
    } else if (tag == "map") {
      Mapping m;
      lines >> std::hex >> m.memory_start >> m.memory_limit >> m.file_offset >> std::dec;
      std::getline(lines >> std::ws, m.filename);
      m.id = run.mappings.size() + 1;
      run.mappings.push_back(m);
    }
  }
  EXPECT_FALSE(run.mappings.empty()) << out;
  return run;
}

// An unsymbolized profile, as the preload library writes it, with the two known addresses.
Profile MakeProfile(const TargetRun& run, const std::string& build_id) {
  Profile p;
  p.sample_types = {{"inuse_space", "bytes"}};
  p.default_sample_type = "inuse_space";
  p.mappings = run.mappings;
  for (Mapping& m : p.mappings) m.build_id = build_id;
  auto mapping_of = [&](uint64_t pc) -> uint64_t {
    for (const Mapping& m : p.mappings) {
      if (pc >= m.memory_start && pc < m.memory_limit) return m.id;
    }
    ADD_FAILURE() << "no mapping contains " << std::hex << pc;
    return 0;
  };
  p.locations = {{.id = 1, .mapping_id = mapping_of(run.build_pc), .address = run.build_pc},
                 {.id = 2, .mapping_id = mapping_of(run.inlined_pc), .address = run.inlined_pc}};
  p.samples = {{.location_ids = {1}, .values = {3 << 20}},
               {.location_ids = {2}, .values = {1 << 20}}};
  return p;
}

// Options that look for debug files in `debug_path` only (not /usr/lib/debug), ask no debuginfod
// server, and keep answers in `cache` ("": none).
SymbolizeOptions OnlyIn(const std::string& debug_path, const std::string& cache = "") {
  SymbolizeOptions options;
  options.debug_paths = {debug_path};
  options.cache_directory = cache;
  return options;
}

const Function& FunctionOf(const Profile& p, const Line& line) {
  for (const Function& f : p.functions) {
    if (f.id == line.function_id) return f;
  }
  static const Function missing;
  ADD_FAILURE() << "missing function " << line.function_id;
  return missing;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void ExpectSymbolized(const Profile& p, const TargetRun& run) {
  const Location& build = p.locations[0];
  ASSERT_EQ(build.lines.size(), 1u);
  const Function& build_fn = FunctionOf(p, build.lines[0]);
  EXPECT_EQ(build_fn.name, "ns::Widget::Build(int)");
  EXPECT_EQ(build_fn.system_name, "_ZN2ns6Widget5BuildEi");
  EXPECT_TRUE(EndsWith(build_fn.filename, "/testdata/symbolize_target.cc")) << build_fn.filename;
  EXPECT_EQ(build_fn.start_line, run.decl_line);
  EXPECT_EQ(build.lines[0].line, run.build_line);

  // pprof order: the inlined callee first, the function it was inlined into last.
  const Location& inlined = p.locations[1];
  ASSERT_EQ(inlined.lines.size(), 2u);
  EXPECT_EQ(FunctionOf(p, inlined.lines[0]).name, "ns::Helper(int, int)");
  EXPECT_EQ(FunctionOf(p, inlined.lines[0]).system_name, "_ZN2ns6HelperEii");
  EXPECT_EQ(inlined.lines[0].line, run.inlined_line);
  EXPECT_EQ(FunctionOf(p, inlined.lines[1]).name, "ns::Outer(int)");
  EXPECT_EQ(inlined.lines[1].line, run.outer_line);

  for (const Mapping& m : p.mappings) {
    if (m.id != build.mapping_id) continue;
    EXPECT_TRUE(m.has_functions);
    EXPECT_TRUE(m.has_filenames);
    EXPECT_TRUE(m.has_line_numbers);
    EXPECT_TRUE(m.has_inline_frames);
  }
}

TEST(SymbolizerTest, PieWithInlinedFrames) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  Profile p = MakeProfile(run, "");
  SymbolizeStats stats = Symbolize(p);
  EXPECT_EQ(stats.locations, 2u);
  EXPECT_EQ(stats.symbolized, 2u);
  EXPECT_EQ(stats.no_file + stats.build_id_mismatch + stats.no_symbols, 0u);
  ExpectSymbolized(p, run);
}

TEST(SymbolizerTest, FixedAddressExecutable) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET_NOPIE);
  Profile p = MakeProfile(run, symbolize::ReadElfBuildId(SYMBOLIZE_TARGET_NOPIE));
  EXPECT_EQ(Symbolize(p).symbolized, 2u);
  ExpectSymbolized(p, run);
}

TEST(SymbolizerTest, MatchingBuildIdAndIdempotence) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  std::string build_id = symbolize::ReadElfBuildId(SYMBOLIZE_TARGET);
  ASSERT_EQ(build_id.size(), 40u) << "the toolchain should emit a SHA-1 build id";
  Profile p = MakeProfile(run, build_id);
  EXPECT_EQ(Symbolize(p).symbolized, 2u);
  ExpectSymbolized(p, run);
  Profile again = p;
  SymbolizeStats stats = Symbolize(again);
  EXPECT_EQ(stats.symbolized, 2u);
  EXPECT_EQ(again, p) << "a second pass must change nothing";
}

TEST(SymbolizerTest, FunctionsAreDeduplicated) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  Profile p = MakeProfile(run, "");
  // A second location at the same address must reuse the same Function entries.
  p.locations.push_back(
      {.id = 3, .mapping_id = p.locations[0].mapping_id, .address = run.build_pc});
  Symbolize(p);
  EXPECT_EQ(p.functions.size(), 3u);  // Build, Helper, Outer
  EXPECT_EQ(p.locations[2].lines, p.locations[0].lines);
}

TEST(SymbolizerTest, BuildIdMismatchIsLeftUnsymbolized) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  Profile p = MakeProfile(run, "00112233445566778899aabbccddeeff00112233");
  SymbolizeStats stats = Symbolize(p, OnlyIn(test_support::MakeTempDir()));
  EXPECT_EQ(stats.symbolized, 0u);
  EXPECT_EQ(stats.build_id_mismatch, 2u);
  EXPECT_TRUE(p.locations[0].lines.empty());
  EXPECT_TRUE(p.functions.empty());
  EXPECT_FALSE(p.mappings[0].has_functions);
}

TEST(SymbolizerTest, ReplacedBinaryFallsBackToBuildIdDebugFile) {
  // The mapped path now holds another program; the original survives as a .build-id debug file.
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  std::string build_id = symbolize::ReadElfBuildId(SYMBOLIZE_TARGET);
  std::string root = test_support::MakeTempDir();
  std::string dir = root + "/.build-id/" + build_id.substr(0, 2);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(SYMBOLIZE_TARGET, dir + "/" + build_id.substr(2) + ".debug");
  std::string replaced = root + "/replaced";
  std::filesystem::copy_file(SYMBOLIZE_TARGET_NOPIE, replaced);
  Profile p = MakeProfile(run, build_id);
  for (Mapping& m : p.mappings) m.filename = replaced;
  SymbolizeStats stats = Symbolize(p, OnlyIn(root));
  EXPECT_EQ(stats.symbolized, 2u);
  ExpectSymbolized(p, run);
}

TEST(SymbolizerTest, DeletedFileIsUsedOnlyWithMatchingBuildId) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  Profile with_id = MakeProfile(run, symbolize::ReadElfBuildId(SYMBOLIZE_TARGET));
  for (Mapping& m : with_id.mappings) m.filename += " (deleted)";
  EXPECT_EQ(Symbolize(with_id).symbolized, 2u);
  ExpectSymbolized(with_id, run);

  Profile without_id = MakeProfile(run, "");
  for (Mapping& m : without_id.mappings) m.filename += " (deleted)";
  EXPECT_EQ(Symbolize(without_id).no_file, 2u);
}

// Installs `debug_file` as `<root>/.build-id/xx/rest.debug` and returns the build id.
std::string InstallBuildIdDebugFile(const std::string& root, const std::string& debug_file) {
  std::string build_id = symbolize::ReadElfBuildId(debug_file);
  EXPECT_EQ(build_id.size(), 40u) << debug_file;
  std::string dir = root + "/.build-id/" + build_id.substr(0, 2);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(debug_file, dir + "/" + build_id.substr(2) + ".debug");
  return build_id;
}

// A binary deleted while it ran (and since replaced by nothing): only its separate debug file,
// made by `objcopy --only-keep-debug`, is left. Its code sections are NOBITS and its PT_LOAD
// headers no longer give the binary's file offsets, so the mapping alone places the addresses.
void ExpectDeletedBinarySymbolizedFromDebugFile(const std::string& target,
                                                const std::string& debug_file) {
  TargetRun run = RunTarget(target);
  std::string root = test_support::MakeTempDir();
  std::string build_id = InstallBuildIdDebugFile(root, debug_file);
  ASSERT_EQ(build_id, symbolize::ReadElfBuildId(target));
  Profile p = MakeProfile(run, build_id);
  for (Mapping& m : p.mappings) m.filename = root + "/gone/symbolize_target (deleted)";
  SymbolizeStats stats = Symbolize(p, OnlyIn(root));
  EXPECT_EQ(stats.symbolized, 2u);
  EXPECT_EQ(stats.no_file + stats.build_id_mismatch + stats.no_symbols, 0u);
  ExpectSymbolized(p, run);
}

TEST(SymbolizerTest, DeletedPieFromOnlyKeepDebugFile) {
  ExpectDeletedBinarySymbolizedFromDebugFile(SYMBOLIZE_TARGET, SYMBOLIZE_TARGET_DEBUG);
}

TEST(SymbolizerTest, DeletedFixedAddressExecutableFromOnlyKeepDebugFile) {
  ExpectDeletedBinarySymbolizedFromDebugFile(SYMBOLIZE_TARGET_NOPIE, SYMBOLIZE_TARGET_NOPIE_DEBUG);
}

// A stripped binary with no build id: its DWARF comes from the debug file its .gnu_debuglink names
// (beside it, in .debug/), handed to libdwfl for the binary's own addresses.
TEST(SymbolizerTest, StrippedBinaryWithoutBuildIdUsesItsDebuglinkFile) {
  std::string root = test_support::MakeTempDir();
  std::string binary = root + "/noid";
  std::filesystem::copy_file(SYMBOLIZE_TARGET_NOID_STRIPPED, binary);
  std::filesystem::create_directories(root + "/.debug");
  std::filesystem::copy_file(SYMBOLIZE_TARGET_NOID_DEBUG,
                             root + "/.debug/symbolize_target_noid.debug");
  TargetRun run = RunTarget(binary);
  Profile p = MakeProfile(run, "");
  SymbolizeStats stats = Symbolize(p, OnlyIn(root + "/nothing"));
  EXPECT_EQ(stats.symbolized, 2u);
  ExpectSymbolized(p, run);
  // Without the debug file, only the dynamic symbols are left, which name neither function.
  std::filesystem::remove(root + "/.debug/symbolize_target_noid.debug");
  Profile stripped = MakeProfile(run, "");
  Symbolize(stripped, OnlyIn(root + "/nothing"));
  for (const Function& f : stripped.functions) EXPECT_NE(f.name, "ns::Widget::Build(int)");
}

TEST(SymbolizerTest, OnlyKeepDebugFileRejectsAddressesOutsideCode) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  std::string root = test_support::MakeTempDir();
  Profile p = MakeProfile(run, InstallBuildIdDebugFile(root, SYMBOLIZE_TARGET_DEBUG));
  for (Mapping& m : p.mappings) m.filename = root + "/gone (deleted)";
  p.locations[0].address = p.mappings[0].memory_start - 1;  // before its mapping
  p.locations[1].address = p.mappings[0].memory_limit + (1ull << 40);
  SymbolizeStats stats = Symbolize(p, OnlyIn(root));
  EXPECT_EQ(stats.symbolized, 0u);
  EXPECT_EQ(stats.no_symbols, 2u);
}

TEST(SymbolizerTest, MissingFilesAndPseudoMappings) {
  Profile p;
  p.mappings = {
      {.id = 1,
       .memory_start = 0x1000,
       .memory_limit = 0x2000,
       .filename = "/nonexistent/libgone.so"},
      {.id = 2, .memory_start = 0x7fff0000, .memory_limit = 0x7fff1000, .filename = "[vdso]"},
      {.id = 3, .memory_start = 0x3000, .memory_limit = 0x4000, .filename = "/dev/null"}};
  p.locations = {{.id = 1, .mapping_id = 1, .address = 0x1100},
                 {.id = 2, .mapping_id = 2, .address = 0x7fff0100},
                 {.id = 3, .mapping_id = 0, .address = 0x5000},
                 {.id = 4, .mapping_id = 3, .address = 0x3100}};
  SymbolizeStats stats = Symbolize(p);
  EXPECT_EQ(stats.locations, 4u);
  EXPECT_EQ(stats.symbolized, 0u);
  EXPECT_EQ(stats.no_file, 4u);
  for (const Location& loc : p.locations) EXPECT_TRUE(loc.lines.empty());
}

TEST(SymbolizerTest, AddressOutsideLoadSegments) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  Profile p = MakeProfile(run, "");
  p.locations[0].address = p.mappings[0].memory_start - 1;  // before its mapping
  p.locations[1].address = p.mappings[0].memory_limit + (1ull << 40);
  SymbolizeStats stats = Symbolize(p);
  EXPECT_EQ(stats.symbolized, 0u);
  EXPECT_EQ(stats.no_symbols, 2u);
}

// _start comes from crt1.o, which has no debug info: it has a name (the symbol table's) and no
// line, although the debug info of the copy of Churn the linker discarded lies over it (at
// address 0), and libdwfl's line lookup answers with that copy's rows. Churn's kept copy keeps
// its lines.
TEST(SymbolizerTest, CodeWithoutDebugInfoHasNoLineEvenUnderDiscardedCode) {
  TargetRun run = RunTarget(SYMBOLIZE_DISCARDED_COPY);
  Profile p = MakeProfile(run, "");
  Symbolize(p);
  // Churn, with the steps inlined into it.
  const Location& churn = p.locations[0];
  ASSERT_FALSE(churn.lines.empty());
  EXPECT_EQ(FunctionOf(p, churn.lines.back()).name, "Churn(unsigned long volatile*)");
  for (const Line& line : churn.lines) {
    EXPECT_TRUE(EndsWith(FunctionOf(p, line).filename, "/testdata/discarded_copy.h"));
    EXPECT_GT(line.line, 0);
  }

  const Location& start = p.locations[1];
  ASSERT_EQ(start.lines.size(), 1u);
  const Function& start_fn = FunctionOf(p, start.lines[0]);
  EXPECT_EQ(start_fn.name, "_start");
  EXPECT_EQ(start_fn.filename, "");
  EXPECT_EQ(start.lines[0].line, 0);
}

TEST(SymbolizerTest, PprofShowsSymbolizedNames) {
  TargetRun run = RunTarget(SYMBOLIZE_TARGET);
  Profile p = MakeProfile(run, symbolize::ReadElfBuildId(SYMBOLIZE_TARGET));
  Symbolize(p);
  std::string dir = test_support::MakeTempDir();
  WriteProfileFile(p, dir + "/heap.pb.gz");
  std::string out;
  std::string env =
      "HOME=" + test_support::ShellQuote(dir) + " PPROF_TMPDIR=" + test_support::ShellQuote(dir);
  ASSERT_EQ(test_support::RunCommand(env + " " + test_support::ShellQuote(HEAPREC_PPROF) +
                                         " -top -nodefraction=0 -symbolize=none " +
                                         test_support::ShellQuote(dir + "/heap.pb.gz"),
                                     &out),
            0)
      << out;
  EXPECT_NE(out.find("of 4MB total"), std::string::npos) << out;
  EXPECT_NE(out.find("3MB 75.00% 75.00%        3MB 75.00%  ns::Widget::Build(int)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1MB 25.00%   100%        1MB 25.00%  ns::Helper(int, int) (inline)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("0     0%   100%        1MB 25.00%  ns::Outer(int)\n"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace heaprec

namespace heaprec {
namespace {

// The cache across runs (symbol_cache.h): a second Symbolizer, in what stands for a later run,
// answers from the cache, with exactly what the first found, while the same DWARF file is found;
// once the binary is gone it names nothing, as without a cache.
TEST(SymbolCacheTest, LaterRunsAnswerFromTheCacheOnlyWhileTheSameDwarfIsFound) {
  std::string root = test_support::MakeTempDir();
  std::string binary = root + "/target";
  std::filesystem::copy_file(SYMBOLIZE_TARGET, binary);
  TargetRun run = RunTarget(binary);
  std::string build_id = symbolize::ReadElfBuildId(binary);
  SymbolizeOptions options = OnlyIn(root, root + "/cache");
  Profile first = MakeProfile(run, build_id);
  EXPECT_EQ(Symbolize(first, options).symbolized, 2u);
  ExpectSymbolized(first, run);

  Symbolizer later(options);
  Profile second = MakeProfile(run, build_id);
  EXPECT_EQ(later.Symbolize(second).symbolized, 2u);
  ExpectSymbolized(second, run);
  std::vector<CachedBinary> cached = later.FromCache();
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(cached[0].locations, 2u);
  EXPECT_EQ(cached[0].dwarf_file, binary);
  EXPECT_EQ(cached[0].cache_file.rfind(root + "/cache/" + build_id + ".", 0), 0u);
  EXPECT_TRUE(std::filesystem::exists(cached[0].cache_file));

  std::filesystem::remove(binary);
  Profile gone = MakeProfile(run, build_id);
  EXPECT_EQ(Symbolize(gone, options).no_file, 2u);
}

// Answers written by another build of heaprec (another stamp), for another DWARF file, or
// damaged, are not used.
TEST(SymbolCacheTest, AnotherBuildsOrSourcesOrDamagedAnswersAreIgnored) {
  std::string root = test_support::MakeTempDir();
  std::string binary = root + "/target";
  std::filesystem::copy_file(SYMBOLIZE_TARGET, binary);
  TargetRun run = RunTarget(binary);
  std::string build_id = symbolize::ReadElfBuildId(binary);
  SymbolizeOptions options = OnlyIn(root, root + "/cache");
  std::string file;
  {
    Symbolizer first(options);
    Profile p = MakeProfile(run, build_id);
    first.Symbolize(p);
  }
  {
    Symbolizer second(options);
    Profile p = MakeProfile(run, build_id);
    second.Symbolize(p);
    ASSERT_EQ(second.FromCache().size(), 1u);
    file = second.FromCache()[0].cache_file;
  }
  auto read = [&] {
    std::ifstream in(file);
    std::ostringstream all;
    all << in.rdbuf();
    return all.str();
  };
  const std::string original = read();
  auto cached_after = [&](const std::string& text) {
    std::ofstream(file, std::ios::trunc) << text;
    Symbolizer symbolizer(options);
    Profile p = MakeProfile(run, build_id);
    EXPECT_EQ(symbolizer.Symbolize(p).symbolized, 2u);  // from the binary: the same names
    ExpectSymbolized(p, run);
    return symbolizer.FromCache().size();
  };
  EXPECT_EQ(cached_after(original), 1u);
  const std::string stamp = original.substr(0, original.find('\n'));
  const std::string rest = original.substr(original.find('\n') + 1);
  EXPECT_EQ(cached_after("heaprec-symbols 2 0123456789abcdef\n" + rest), 0u);
  const std::string source = rest.substr(0, rest.find('\n'));
  const std::string answers = rest.substr(rest.find('\n') + 1);
  EXPECT_EQ(cached_after(stamp + "\n" + source + "x\n" + answers), 0u);
  // The right stamp and source, but every answer cut short: not one is taken.
  std::ostringstream damaged;
  std::istringstream lines(answers);
  for (std::string line; std::getline(lines, line);) {
    damaged << line.substr(0, line.rfind('\t')) << "\n";
  }
  EXPECT_EQ(cached_after(stamp + "\n" + source + "\n" + damaged.str()), 0u);
}

}  // namespace
}  // namespace heaprec
