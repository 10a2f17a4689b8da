#include "preload/control/settings.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdlib>

#include "core/manifest_writer.h"
#include "preload/http/address.h"
#include "preload/process/environment.h"
#include "schema/control.h"
#include "schema/manifest.h"
#include "schema/profile_schema.h"

namespace heaprec::preload {
namespace {

constexpr bool EndsWith(const char* text, std::size_t length, const char* suffix,
                        std::size_t suffix_length) {
  if (suffix_length > length) return false;
  for (std::size_t i = 0; i < suffix_length; ++i) {
    if (text[length - suffix_length + i] != suffix[i]) return false;
  }
  return true;
}
// Profiles are named NAME.pb.gz (schema/profile_schema.h), the default ones too: dumps other than
// the final one put their sequence number, and the peak profile ".peak", before that suffix.
static_assert(EndsWith(kDefaultOutputTemplate, sizeof(kDefaultOutputTemplate) - 1,
                       schema::kProfileSuffix, sizeof(schema::kProfileSuffix) - 1));

// The one line a bad value gets, assembled without stdio (stdio may allocate or hold locks): what
// is wrong is `detail` when the row's parser gave one, else what the row expects. Under `heaprec
// run` (a manifest named) it is a `declined` line of the manifest, and heaprec run says it once for
// all the program's processes, in place of its guess at why no profile was written; on stderr
// otherwise, or when the manifest cannot be written.
void Complain(const char* variable, const char* value, const char* expected,
              const char* detail = nullptr) {
  const char* parts[] = {"heaprec: ",
                         variable,
                         "='",
                         value,
                         "' is invalid: ",
                         detail != nullptr ? "" : "expected ",
                         detail != nullptr ? detail : expected,
                         "; profiling is off for this process"};
  const char* manifest = EnvironmentValue(schema::kManifestVariable);
  if (manifest != nullptr && manifest[0] != '\0' &&
      AppendTextToManifest(manifest, getpid(), schema::kManifestDeclined, parts,
                           sizeof(parts) / sizeof(parts[0]))) {
    return;
  }
  for (const char* part : parts) {
    ssize_t ignored = write(STDERR_FILENO, part, strlen(part));
    (void)ignored;
  }
  ssize_t ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
}

bool ParseUnsigned(const char** cursor, std::uint64_t* value) {
  const char* p = *cursor;
  if (*p < '0' || *p > '9') return false;
  std::uint64_t v = 0;
  for (; *p >= '0' && *p <= '9'; ++p) {
    std::uint64_t digit = static_cast<std::uint64_t>(*p - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *value = v;
  *cursor = p;
  return true;
}

bool EqualsIgnoreCase(const char* a, const char* b) { return strcasecmp(a, b) == 0; }

bool IsFalse(const char* text) {
  return EqualsIgnoreCase(text, "0") || EqualsIgnoreCase(text, "false") ||
         EqualsIgnoreCase(text, "no") || EqualsIgnoreCase(text, "off") || text[0] == '\0';
}

bool CopyPath(const char* text, char* out, std::size_t capacity) {
  std::size_t n = strlen(text);
  if (n == 0 || n >= capacity) return false;
  memcpy(out, text, n + 1);
  return true;
}

}  // namespace

bool IsTrue(const char* text) {
  return EqualsIgnoreCase(text, "1") || EqualsIgnoreCase(text, "true") ||
         EqualsIgnoreCase(text, "yes") || EqualsIgnoreCase(text, "on");
}

bool ParseByteCount(const char* text, std::uint64_t* bytes) {
  const char* p = text;
  std::uint64_t value = 0;
  if (!ParseUnsigned(&p, &value)) return false;
  std::uint64_t scale = 1;
  if (*p != '\0') {
    switch (*p | 0x20) {  // ASCII lower case
      case 'k':
        scale = std::uint64_t{1} << 10;
        break;
      case 'm':
        scale = std::uint64_t{1} << 20;
        break;
      case 'g':
        scale = std::uint64_t{1} << 30;
        break;
      default:
        return false;
    }
    ++p;
    if (EqualsIgnoreCase(p, "ib") || EqualsIgnoreCase(p, "b")) p += strlen(p);
    if (*p != '\0') return false;
  }
  if (value == 0 || value > UINT64_MAX / scale) return false;
  *bytes = value * scale;
  return true;
}

bool ParseSeconds(const char* text, std::uint64_t* milliseconds) {
  const char* p = text;
  std::uint64_t whole = 0;
  if (!ParseUnsigned(&p, &whole)) return false;
  std::uint64_t fraction_ms = 0;
  if (*p == '.') {
    ++p;
    std::uint64_t scale = 100;
    if (*p < '0' || *p > '9') return false;
    for (; *p >= '0' && *p <= '9'; ++p) {
      fraction_ms += static_cast<std::uint64_t>(*p - '0') * scale;
      scale /= 10;
    }
  }
  if (*p == 's') ++p;
  if (*p != '\0' || whole > 365ull * 24 * 3600) return false;
  *milliseconds = whole * 1000 + fraction_ms;
  return true;
}

bool ParseSignal(const char* text, int* signal_number) {
  const char* p = text;
  std::uint64_t number = 0;
  if (ParseUnsigned(&p, &number)) {
    if (*p != '\0' || number < 1 || number >= static_cast<std::uint64_t>(NSIG)) return false;
    *signal_number = static_cast<int>(number);
  } else {
    if (strncasecmp(p, "SIG", 3) == 0) p += 3;
    // Only signals a program can spare for a dump request; SIGKILL, SIGSEGV and friends make no
    // sense.
    static constexpr struct {
      const char* name;
      int number;
    } kSignals[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},
                    {"PROF", SIGPROF}, {"URG", SIGURG},   {"WINCH", SIGWINCH}};
    int found = 0;
    for (const auto& s : kSignals) {
      if (EqualsIgnoreCase(p, s.name)) found = s.number;
    }
    if (found == 0) return false;
    *signal_number = found;
  }
  if (*signal_number == SIGKILL || *signal_number == SIGSTOP) return false;
  return true;
}

bool ParseMaxDepth(const char* text, std::uint32_t* depth) {
  const char* p = text;
  std::uint64_t value = 0;
  if (!ParseUnsigned(&p, &value) || *p != '\0' || value < 1 || value > kMaxStackDepth) return false;
  *depth = static_cast<std::uint32_t>(value);
  return true;
}

bool ParseSeed(const char* text, std::uint64_t* seed) {
  const char* p = text;
  return ParseUnsigned(&p, seed) && *p == '\0';
}

namespace {

// The rows' parsers: each reads one variable's text into *settings.

bool ReadSampleInterval(const char* text, Settings* settings, const char**) {
  return ParseByteCount(text, &settings->sample_interval);
}

// A Ruby object count: the profile's period is an int64, and anything near that bound samples
// nothing anyway. Ruby reads it itself; the row is there for `heaprec run --sample-every`.
bool ReadSampleEvery(const char* text, Settings*, const char**) {
  std::uint64_t count = 0;
  return ParseSeed(text, &count) && count != 0 && count <= static_cast<std::uint64_t>(INT64_MAX);
}

// The Ruby front end reads it (autorun.rb, which also refuses a backend its Ruby lacks); the row
// lets `heaprec run --ruby-liveness` refuse a misspelt one before the program runs.
bool ReadRubyLiveness(const char* text, Settings*, const char**) {
  return strcmp(text, "object_id") == 0 || strcmp(text, "weak_map") == 0;
}

bool ReadOutput(const char* text, Settings* settings, const char**) {
  return CopyPath(text, settings->output_template, sizeof(settings->output_template));
}

bool ReadDumpInterval(const char* text, Settings* settings, const char**) {
  return ParseSeconds(text, &settings->dump_interval_ms);
}

bool ReadDumpSignal(const char* text, Settings* settings, const char**) {
  return text[0] == '\0' || ParseSignal(text, &settings->dump_signal);  // "": no dump signal
}

bool ReadDumpAbove(const char* text, Settings* settings, const char**) {
  if (IsFalse(text)) {  // "", 0: off
    settings->dump_above = 0;
    return true;
  }
  return ParseByteCount(text, &settings->dump_above);
}

// 1/true/yes/on, 0/false/no/off or "" into *on.
bool ReadSwitch(const char* text, bool* on) {
  if (IsTrue(text)) {
    *on = true;
  } else if (IsFalse(text)) {
    *on = false;
  } else {
    return false;
  }
  return true;
}

bool ReadQuiet(const char* text, Settings* settings, const char**) {
  return ReadSwitch(text, &settings->quiet);
}

bool ReadUncompressed(const char* text, Settings* settings, const char**) {
  return ReadSwitch(text, &settings->uncompressed);
}

// A runtime's name: "ruby" is the one front end that attaches today.
bool ReadRuntime(const char* text, Settings* settings, const char**) {
  if (strcmp(text, "ruby") != 0) return false;
  settings->runtime = true;
  return true;
}

bool ReadPeakAtOnce(const char* text, Settings* settings, const char**) {
  return ReadSwitch(text, &settings->peak_at_once);
}

bool ReadNoHeapRecord(const char* text, Settings* settings, const char**) {
  bool off = false;
  if (!ReadSwitch(text, &off)) return false;
  settings->heap_record = !off;
  return true;
}

bool ReadMaxDepth(const char* text, Settings* settings, const char**) {
  return ParseMaxDepth(text, &settings->max_depth);
}

bool ReadUnwind(const char* text, Settings* settings, const char**) {
  // "libunwind" is the name the DWARF unwinder had when heaprec used libunwind for it.
  if (EqualsIgnoreCase(text, "dwarf") || EqualsIgnoreCase(text, "libunwind")) {
    settings->unwind = UnwindMethod::kDwarf;
  } else if (EqualsIgnoreCase(text, "libgcc")) {
    settings->unwind = UnwindMethod::kLibgcc;
  } else if (EqualsIgnoreCase(text, "check")) {
    settings->unwind = UnwindMethod::kCheck;
  } else if (EqualsIgnoreCase(text, "fp")) {
    settings->unwind = UnwindMethod::kFramePointers;
  } else {
    return false;
  }
  return true;
}

// 1 (this process only, from the environment), 0, or the pid to profile (`heaprec run` gives its
// program's, so that the programs it starts are not profiled but the program itself is).
bool ReadNoFollow(const char* text, Settings* settings, const char**) {
  if (ReadSwitch(text, &settings->no_follow)) return true;
  const char* p = text;
  std::uint64_t pid = 0;
  if (!ParseUnsigned(&p, &pid) || *p != '\0' || pid <= 1 || pid >= (1u << 22)) return false;
  settings->no_follow = true;
  settings->only_pid = static_cast<int>(pid);
  return true;
}

bool ReadSeed(const char* text, Settings* settings, const char**) {
  return ParseSeed(text, &settings->seed);
}

bool ReadManifest(const char* text, Settings* settings, const char**) {
  return text[0] == '\0' || CopyPath(text, settings->manifest, sizeof(settings->manifest));
}

bool ReadDormant(const char* text, Settings* settings, const char**) {
  return ReadSwitch(text, &settings->dormant);
}

// The HTTP endpoint reads its variables itself; the rows check `heaprec run --http`.
bool ReadHttp(const char* text, Settings*, const char** detail) {
  HttpAddress address;
  return ParseHttpAddress(text, &address, detail);
}

bool ReadHttpPublic(const char* text, Settings*, const char**) {
  bool on = false;
  return ReadSwitch(text, &on);
}

constexpr std::uint8_t kLibraryAndRuby = kReadByLibrary | kReadByRuby;

constexpr SettingRow kRows[] = {
    // With --ruby, the interval of the native bytes behind Ruby objects (the library reads it in
    // runtime mode).
    {"HEAPREC_SAMPLE_INTERVAL", "--sample-interval", "BYTES", kLibraryAndRuby, ReadSampleInterval,
     "a byte count such as 524288, 512K or 2M (1 = exact)"},
    {"HEAPREC_SAMPLE_EVERY", "--sample-every", "N", kReadByRuby, ReadSampleEvery,
     "a number of objects such as 1000 (1 = every object)"},
    {"HEAPREC_RUBY_LIVENESS", "--ruby-liveness", "BACKEND", kReadByRuby, ReadRubyLiveness,
     "object_id or weak_map"},
    {"HEAPREC_OUTPUT", "--output", "TEMPLATE", kLibraryAndRuby, ReadOutput,
     "a non-empty path template shorter than PATH_MAX"},
    {"HEAPREC_DUMP_INTERVAL", "--dump-interval", "SECONDS", kLibraryAndRuby, ReadDumpInterval,
     "seconds such as 10 or 0.5 (0 = off)"},
    {"HEAPREC_DUMP_SIGNAL", "--dump-signal", "SIGNAL", kLibraryAndRuby, ReadDumpSignal,
     "a signal name such as SIGUSR2, USR1, HUP, or its number"},
    {"HEAPREC_DUMP_ABOVE", "--dump-above", "BYTES", kReadByLibrary, ReadDumpAbove,
     "a byte count such as 100M or 2G (0 = off)"},
    {"HEAPREC_QUIET", "--quiet", nullptr, kReadByLibrary, ReadQuiet, "1 or 0"},
    {"HEAPREC_NO_HEAP_RECORD", "--no-heap-record", nullptr, kReadByLibrary, ReadNoHeapRecord,
     "1 (keep no heap record) or 0"},
    {"HEAPREC_MAX_DEPTH", "--max-depth", "N", kLibraryAndRuby, ReadMaxDepth,
     "a frame count from 1 to 1024"},
    {"HEAPREC_UNWIND", "--unwind", "UNWINDER", kReadByLibrary, ReadUnwind,
     "dwarf, libgcc, check or fp"},
    {"HEAPREC_NO_FOLLOW", "--no-follow", nullptr, kReadByLibrary, ReadNoFollow,
     "1 (this process only) or 0"},
    {"HEAPREC_SEED", "--seed", "N", kLibraryAndRuby, ReadSeed, "an unsigned integer"},
    {schema::kManifestVariable, nullptr, "PATH", kLibraryAndRuby, ReadManifest,
     "a path shorter than PATH_MAX"},
    {schema::kDormantVariable, "--dormant", nullptr, kLibraryAndRuby, ReadDormant, "1 or 0"},
    {schema::kPeakAtOnceVariable, nullptr, nullptr, kReadByLibrary, ReadPeakAtOnce, "1 or 0"},
    {schema::kUncompressedVariable, nullptr, nullptr, kReadByLibrary, ReadUncompressed, "1 or 0"},
    {schema::kRuntimeVariable, nullptr, nullptr, kReadByLibrary, ReadRuntime, "ruby"},
    {"HEAPREC_HTTP", "--http", "ADDR", kReadByHttpServer | kReadByRuby, ReadHttp,
     "a port, HOST:PORT or a Unix socket path"},
    {"HEAPREC_HTTP_PUBLIC", "--http-public", nullptr, kReadByHttpServer | kReadByRuby,
     ReadHttpPublic, "1 or 0"},
};

}  // namespace

SettingTable AllSettings() { return {kRows, sizeof(kRows) / sizeof(kRows[0])}; }

const SettingRow* FindSettingByFlag(const char* flag) {
  for (const SettingRow& row : kRows) {
    if (row.run_flag != nullptr && strcmp(row.run_flag, flag) == 0) return &row;
  }
  return nullptr;
}

bool ReadSettings(Settings* settings) {
  memcpy(settings->output_template, kDefaultOutputTemplate, sizeof(kDefaultOutputTemplate));
  for (const SettingRow& row : kRows) {
    if ((row.readers & kReadByLibrary) == 0) continue;
    const char* value = EnvironmentValue(row.variable);
    if (value == nullptr) continue;
    const char* detail = nullptr;
    if (!row.parse(value, settings, &detail)) {
      Complain(row.variable, value, row.expected, detail);
      return false;
    }
  }
  // Attach and detach arrive on the dump signal (docs/design/dormant.md): without one, a dormant
  // process could never be woken.
  if (settings->dormant && settings->dump_signal == 0) {
    Complain(schema::kDormantVariable, EnvironmentValue(schema::kDormantVariable),
             "1 only together with HEAPREC_DUMP_SIGNAL, which carries attach and detach");
    return false;
  }
  return true;
}

}  // namespace heaprec::preload
