// What libheaprec.so shows and takes from the process it is loaded into, read from the built
// library with binutils: it exports only the allocator, signal and _exit entry points and the C
// API, pulls in no C++ runtime and no unwinder, leaves the program's exception handling alone, and
// keeps its fast paths short.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string RunCommand(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string out;
  if (!pipe) return out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) out.append(buffer.data(), n);
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

TEST(LibrarySymbolsTest, ExportsOnlyTheEntryPointsDlcloseSignalsExitAndTheApi) {
  const std::set<std::string> allowed = {
      "malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
      "memalign", "valloc", "pvalloc", "malloc_usable_size", "dlclose", "heaprec_dump",
      "heaprec_start", "heaprec_stop", "heaprec_control_block", "heaprec_attach_command",
      "heaprec_set_sample_interval", "heaprec_is_active",
      // the runtime interface (include/heaprec/runtime.h)
      "heaprec_runtime_attach", "heaprec_runtime_detach", "heaprec_runtime_live_blocks",
      "heaprec_runtime_live_bytes", "heaprec_runtime_native_stack",
      // signals (signal_table.h), _exit (endings.h), setuid (identity_hooks.cc), exec
      // (exec_hooks.cc)
      "sigaction", "__sigaction", "signal", "bsd_signal", "sysv_signal", "__sysv_signal", "_exit",
      "_Exit", "setuid", "seteuid", "setreuid", "setresuid", "execve", "execv", "execvp", "execvpe",
      "fexecve", "execveat", "execl", "execlp", "execle",
      // operator new / delete in every form
      "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
      "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
      "_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
      "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvSt11align_val_t",
      "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
      "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t"};
  std::set<std::string> exported;
  for (const std::string& name :
       Lines(RunCommand("nm -D --defined-only --format=just-symbols " HEAPREC_LIB))) {
    exported.insert(name);
  }
  EXPECT_EQ(exported, allowed);
}

// Needed: libc and libgcc_s only. libgcc_s is loaded with the program rather than by dlopen at
// start-up (with libm gone too, 0.43 ms less per process: docs/benchmarks.md); it is the unwinder
// C++ programs already use, so its _Unwind_* in the global scope change nothing
// (ProgramExceptionsStayWithLibgcc), and heaprec still calls it through dlsym on its own handle.
// Not libm: schema/exp_log.h.
TEST(LibrarySymbolsTest, ImportsNoCxxRuntimeOrOtherUnwinder) {
  std::string needed = RunCommand("readelf -d " HEAPREC_LIB " | grep NEEDED");
  ASSERT_FALSE(needed.empty());
  for (const char* library : {"libstdc++", "libunwind", "libz", "liblzma", "libm."}) {
    EXPECT_EQ(needed.find(library), std::string::npos) << needed;
  }
  EXPECT_NE(needed.find("[libgcc_s.so.1]"), std::string::npos) << needed;
  for (const std::string& symbol :
       Lines(RunCommand("nm -D --undefined-only --format=just-symbols " HEAPREC_LIB))) {
    EXPECT_EQ(symbol.find("CXXABI"), std::string::npos) << symbol;
    EXPECT_EQ(symbol.find("GLIBCXX"), std::string::npos) << symbol;
    EXPECT_EQ(symbol.find("_Unwind_"), std::string::npos) << symbol;
    if (symbol != "__cxa_finalize@GLIBC_2.2.5") {
      EXPECT_EQ(symbol.find("__cxa_"), std::string::npos) << symbol;
    }
  }
}

TEST(LibrarySymbolsTest, ProgramExceptionsStayWithLibgcc) {
  std::string out = RunCommand("LD_PRELOAD=" HEAPREC_LIB
                               " HEAPREC_OUTPUT=/tmp/heaprec-throw-test.%p.pb.gz " THROW_LOOP
                               " 2000; rm -f /tmp/heaprec-throw-test.*.pb.gz");
  EXPECT_NE(out.find("128000 "), std::string::npos) << out;  // every throw was caught
  EXPECT_NE(out.find("libgcc_s"), std::string::npos) << out;
}

// The instructions of one function, from objdump, without addresses.
std::vector<std::string> Disassemble(const std::string& function) {
  std::vector<std::string> instructions;
  for (const std::string& line : Lines(RunCommand(
           "objdump -d --no-show-raw-insn --disassemble=" + function + " " HEAPREC_LIB))) {
    // Instruction lines look like "    3e10:\tmovabs $0x3f...,%rax".
    size_t tab = line.find(":\t");
    if (tab != std::string::npos && line.find('<' + function + ">:") == std::string::npos) {
      instructions.push_back(line.substr(tab + 2));
    }
  }
  return instructions;
}

// The unsampled malloc is a countdown in TLS and a branch: no lock, no atomic read-modify-write, no
// call besides the tail jump to glibc or to the slow path. 10 lines today: the 5 instructions of
// the fast path, a padding nop, the slow path's 3 argument moves and its jump.
TEST(LibrarySymbolsTest, MallocFastPathIsShort) {
  std::vector<std::string> code = Disassemble("malloc");
  ASSERT_FALSE(code.empty());
  EXPECT_LE(code.size(), 11u);
  for (const std::string& insn : code) {
    EXPECT_EQ(insn.rfind("call", 0), std::string::npos) << insn;
    EXPECT_EQ(insn.rfind("lock", 0), std::string::npos) << insn;
  }
}

// free of an unsampled block over glibc: one comparison with g_real.lowest_tagged (not null, and
// tags are read), the sign of the word below the block (tagged_blocks.h), a tail jump to glibc; the
// other branches jump to the slow path or to the untagged path (another allocator, or null). 9
// lines today: those 5 instructions, a padding nop, two jumps and a nop. No lock, no call.
TEST(LibrarySymbolsTest, FreeFastPathIsShort) {
  std::vector<std::string> code = Disassemble("free");
  ASSERT_FALSE(code.empty());
  EXPECT_LE(code.size(), 10u);
  for (const std::string& insn : code) {
    EXPECT_EQ(insn.rfind("lock", 0), std::string::npos) << insn;
    EXPECT_EQ(insn.rfind("call", 0), std::string::npos) << insn;
  }
}

}  // namespace
