// Fuzzes the preload library's configuration: the HEAPREC_* parsers, ReadSettings, and the
// expansion of the output template (HEAPREC_OUTPUT / --output). These run inside the profiled
// program, before anything else in heaprec, on values a user or a supervisor typed.
//
// One input drives everything:
//  - the whole input, as a NUL-terminated string, goes to ParseByteCount, ParseSeconds and
//    ParseSignal, and so does the value of every line;
//  - lines of the form NAME=VALUE whose NAME is a heaprec variable without its HEAPREC_ prefix
//    (SAMPLE_INTERVAL=2M, OUTPUT=/tmp/x.%p) are put in the environment for ReadSettings, and
//    removed again afterwards;
//  - the text before the first NUL is an output template, the text after it the program name, and
//    the last bytes of the input give pid, time, sequence number and the output buffer size.
//
// Checks: ASan sees every byte written or read outside its buffer (buffers are exactly sized heap
// blocks), UBSan any undefined behaviour; results stay within their documented ranges, agree
// between ReadSettings and the individual parsers, and the expanded template equals a simple
// std::string reference implementation, fitting exactly when the reference says it fits.
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile_file.h"
#include "preload/control/settings.h"

namespace {

using heaprec::preload::ParseByteCount;
using heaprec::preload::ParseSeconds;
using heaprec::preload::ParseSignal;
using heaprec::preload::Settings;

// Whether `name` (without the HEAPREC_ prefix) is a variable ReadSettings reads: a row of the
// settings table that the library itself reads.
bool IsLibraryVariable(std::string_view name) {
  for (const heaprec::preload::SettingRow& row : heaprec::preload::AllSettings()) {
    if ((row.readers & heaprec::preload::kReadByLibrary) != 0 &&
        std::string_view(row.variable) == "HEAPREC_" + std::string(name)) {
      return true;
    }
  }
  return false;
}

constexpr std::uint64_t kMaxSecondsMs = 365ull * 24 * 3600 * 1000 + 999;

int g_saved_stderr = -1;
int g_dev_null = -1;

[[noreturn]] void Bug(const char* what, std::string_view input) {
  if (g_saved_stderr >= 0) dup2(g_saved_stderr, STDERR_FILENO);
  std::fprintf(stderr, "settings_fuzzer: BUG: %s (input '%.*s')\n", what,
               static_cast<int>(input.size()), input.data());
  std::abort();
}

// An exactly sized, NUL-terminated heap copy, so that ASan flags any read past the terminator.
std::unique_ptr<char[]> CString(std::string_view s) {
  auto out = std::make_unique<char[]>(s.size() + 1);
  std::memcpy(out.get(), s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

bool IsValidDumpSignal(int s) { return s >= 1 && s < NSIG && s != SIGKILL && s != SIGSTOP; }

void CheckParsers(std::string_view text) {
  std::unique_ptr<char[]> c = CString(text);
  std::string_view shown(c.get());  // what the parsers see: up to the first NUL

  std::uint64_t bytes = 0;
  if (ParseByteCount(c.get(), &bytes)) {
    if (bytes < 1) Bug("ParseByteCount accepted a count below 1", shown);
    if (shown.empty() || shown[0] < '0' || shown[0] > '9') {
      Bug("ParseByteCount accepted a value not starting with a digit", shown);
    }
  }
  std::uint64_t ms = 0;
  if (ParseSeconds(c.get(), &ms)) {
    if (ms > kMaxSecondsMs) Bug("ParseSeconds returned more than a year", shown);
  }
  int signal_number = 0;
  if (ParseSignal(c.get(), &signal_number)) {
    if (!IsValidDumpSignal(signal_number)) Bug("ParseSignal accepted an unusable signal", shown);
  }
}

// What ExpandOutputTemplate is documented to produce, with std::string.
std::string Padded(unsigned long long v, int min_digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llu", min_digits, v);
  return buf;
}

std::string ReferenceExpansion(const char* pattern, int pid, const char* program,
                               long long unix_seconds, unsigned sequence) {
  std::string r;
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (*p != '%' || p[1] == '\0') {
      r += *p;
      continue;
    }
    ++p;
    switch (*p) {
      case 'p':
        r += Padded(static_cast<unsigned long long>(pid), 1);
        break;
      case 't': {
        time_t t = static_cast<time_t>(unix_seconds);
        struct tm tm;
        if (gmtime_r(&t, &tm) == nullptr) {
          r += std::to_string(unix_seconds);
        } else {
          long long year = static_cast<long long>(tm.tm_year) + 1900;
          if (year < 0) r += '-';
          r += Padded(year < 0 ? 0ull - static_cast<unsigned long long>(year)
                               : static_cast<unsigned long long>(year),
                      4);
          r += Padded(static_cast<unsigned>(tm.tm_mon + 1), 2);
          r += Padded(static_cast<unsigned>(tm.tm_mday), 2);
          r += 'T';
          r += Padded(static_cast<unsigned>(tm.tm_hour), 2);
          r += Padded(static_cast<unsigned>(tm.tm_min), 2);
          r += Padded(static_cast<unsigned>(tm.tm_sec), 2);
          r += 'Z';
        }
        break;
      }
      case 'e':
        for (const char* q = program; *q != '\0'; ++q) {
          char c = *q;
          bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '+';
          r += safe ? c : '_';
        }
        break;
      case '%':
        r += '%';
        break;
      default:
        r += '%';
        r += *p;
        break;
    }
  }
  if (sequence != 0) {
    constexpr std::string_view kExtension = ".pb.gz";
    size_t at = r.size();
    if (std::string_view(r).ends_with(kExtension)) at -= kExtension.size();
    r.insert(at, "." + Padded(sequence, 4));
  }
  return r;
}

void CheckOutputTemplate(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t nul = input.find('\0');
  std::unique_ptr<char[]> pattern = CString(input.substr(0, nul));
  std::unique_ptr<char[]> program =
      CString(nul == std::string_view::npos ? std::string_view("prog") : input.substr(nul + 1));

  FuzzedDataProvider fdp(data, size);
  bool small = fdp.ConsumeBool();
  size_t capacity = fdp.ConsumeIntegralInRange<size_t>(0, small ? 64 : PATH_MAX + 64);
  int pid = fdp.ConsumeIntegral<int>();
  unsigned sequence = fdp.ConsumeIntegral<unsigned>();
  // Most of the time a date gmtime_r can break down (|t| < 2^55 s, years up to about 1.1e9), else
  // anything, including years past INT_MAX - 1900 and times gmtime_r refuses.
  constexpr long long kMaxSeconds = (1LL << 55);
  long long unix_seconds = fdp.ConsumeBool()
                               ? fdp.ConsumeIntegralInRange<long long>(-kMaxSeconds, kMaxSeconds)
                               : fdp.ConsumeIntegral<long long>();

  // Exactly sized (a zero-byte block for capacity 0): ASan catches any write past it.
  auto out = std::make_unique<char[]>(capacity);
  bool ok = heaprec::ExpandOutputTemplate(pattern.get(), pid, program.get(), unix_seconds, sequence,
                                          out.get(), capacity);
  std::string expected =
      ReferenceExpansion(pattern.get(), pid, program.get(), unix_seconds, sequence);
  bool fits = expected.size() < capacity;
  if (ok != fits) {
    Bug(ok ? "ExpandOutputTemplate returned true for a result that does not fit"
           : "ExpandOutputTemplate returned false for a result that fits",
        pattern.get());
  }
  if (ok) {
    if (capacity == 0 || std::memchr(out.get(), '\0', capacity) == nullptr) {
      Bug("ExpandOutputTemplate returned true without NUL-terminating", pattern.get());
    }
    if (expected != out.get()) Bug("ExpandOutputTemplate expanded differently", pattern.get());
  }
}

void CheckReadSettings(std::string_view input) {
  // NAME=VALUE lines naming a heaprec variable become environment entries. putenv, with strings
  // owned here, rather than setenv: glibc's setenv keeps every value it was ever given, which over
  // millions of executions would grow the fuzzer's memory without bound.
  std::vector<std::string> entries;
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = line.substr(0, eq);
    std::string_view value = line.substr(eq + 1);
    CheckParsers(value);
    if (IsLibraryVariable(name)) {
      // Up to the first NUL, as an environment string would be.
      std::string_view env_value = value.substr(0, value.find('\0'));
      entries.push_back("HEAPREC_" + std::string(name) + "=" + std::string(env_value));
      names.push_back("HEAPREC_" + std::string(name));
    }
  }
  // `entries` is not touched again until the variables are removed: putenv keeps the pointers.
  for (std::string& e : entries) putenv(e.data());

  auto settings = std::make_unique<Settings>();
  dup2(g_dev_null, STDERR_FILENO);  // bad values are reported there, one line each
  bool ok = heaprec::preload::ReadSettings(settings.get());
  dup2(g_saved_stderr, STDERR_FILENO);

  if (ok) {
    const Settings& s = *settings;
    if (s.sample_interval < 1) Bug("ReadSettings: sample interval below 1", input);
    if (s.dump_interval_ms > kMaxSecondsMs) Bug("ReadSettings: dump interval too long", input);
    if (s.dump_signal != 0 && !IsValidDumpSignal(s.dump_signal)) {
      Bug("ReadSettings: unusable dump signal", input);
    }
    if (s.max_depth < 1 || s.max_depth > heaprec::preload::kMaxStackDepth) {
      Bug("ReadSettings: max depth out of range", input);
    }
    if (s.only_pid != 0 && (!s.no_follow || s.only_pid < 2 || s.only_pid >= (1 << 22))) {
      Bug("ReadSettings: bad only_pid", input);
    }
    size_t output_length = strnlen(s.output_template, sizeof s.output_template);
    if (output_length == 0 || output_length == sizeof s.output_template) {
      Bug("ReadSettings: output template empty or not terminated", input);
    }
    if (strnlen(s.manifest, sizeof s.manifest) == sizeof s.manifest) {
      Bug("ReadSettings: manifest not terminated", input);
    }
    // The environment twins and the CLI flags must accept the same values the same way.
    std::uint64_t u = 0;
    int signal_number = 0;
    if (const char* v = getenv("HEAPREC_SAMPLE_INTERVAL")) {
      if (!ParseByteCount(v, &u) || u != s.sample_interval) {
        Bug("ReadSettings and ParseByteCount disagree", input);
      }
    }
    if (const char* v = getenv("HEAPREC_DUMP_INTERVAL")) {
      if (!ParseSeconds(v, &u) || u != s.dump_interval_ms) {
        Bug("ReadSettings and ParseSeconds disagree", input);
      }
    }
    if (const char* v = getenv("HEAPREC_DUMP_SIGNAL"); v != nullptr && v[0] != '\0') {
      if (!ParseSignal(v, &signal_number) || signal_number != s.dump_signal) {
        Bug("ReadSettings and ParseSignal disagree", input);
      }
    }
    if (const char* v = getenv("HEAPREC_OUTPUT")) {
      if (std::strcmp(v, s.output_template) != 0) Bug("ReadSettings: output differs", input);
    }
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Start from a clean slate: a HEAPREC_* variable from the caller's environment would otherwise
  // take part in every ReadSettings call.
  for (const heaprec::preload::SettingRow& row : heaprec::preload::AllSettings()) {
    unsetenv(row.variable);
  }
  g_saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 10);
  g_dev_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (g_saved_stderr < 0 || g_dev_null < 0) {
    std::perror("settings_fuzzer: cannot set up stderr redirection");
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckParsers(input);
  CheckReadSettings(input);
  CheckOutputTemplate(data, size);
  return 0;
}
