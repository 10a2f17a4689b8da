// Settings of the preload library, read once from HEAPREC_* environment variables at start-up.
//
// Every variable is one row of AllSettings(): its `heaprec run` flag, who reads it, its parser and
// what it accepts. The library reads the environment through the rows, and `heaprec run` registers
// its setting flags, checks their values and exports them through the same rows, so the two can
// never disagree (the CLI passes its flags through the environment, so a supervisor can profile a
// service with LD_PRELOAD and these variables alone). A bad value is
// reported on stderr in one line naming the variable and the accepted form, and profiling stays
// off: the program runs as if heaprec were not there.
//
// HEAPREC_HTTP and HEAPREC_HTTP_PUBLIC are the exception: the HTTP endpoint reads them itself
// (http/server.h), and a bad value there turns off the endpoint only, not profiling.
//
// Parsing never allocates (it runs before anything else in the library is ready) and never trusts a
// value's length: paths are copied into fixed buffers and rejected when too long.
#pragma once

#include <limits.h>

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

enum class UnwindMethod { kDwarf, kLibgcc, kCheck, kFramePointers };

inline constexpr std::uint64_t kDefaultSampleInterval = 512 * 1024;

struct Settings {
  std::uint64_t sample_interval =
      kDefaultSampleInterval;           // HEAPREC_SAMPLE_INTERVAL: bytes, 1 = exact
  char output_template[PATH_MAX] = {};  // HEAPREC_OUTPUT: %p pid, %t time, %e program
  std::uint64_t dump_interval_ms = 0;   // HEAPREC_DUMP_INTERVAL: seconds, 0 = off
  int dump_signal = 0;                  // HEAPREC_DUMP_SIGNAL: e.g. SIGUSR2, 0 = off
  std::uint64_t dump_above =
      0;               // HEAPREC_DUMP_ABOVE: a profile each time live crosses N more bytes
  bool quiet = false;  // HEAPREC_QUIET: no line on stderr per signal-triggered dump
  std::uint32_t max_depth = 128;               // HEAPREC_MAX_DEPTH: frames kept per stack
  UnwindMethod unwind = UnwindMethod::kDwarf;  // HEAPREC_UNWIND: dwarf | libgcc | check | fp
  bool no_follow = false;                      // HEAPREC_NO_FOLLOW: see below
  int only_pid = 0;                            // HEAPREC_NO_FOLLOW=PID: profile only this pid
  std::uint64_t seed = 0;        // HEAPREC_SEED: fixed sampler seed (tests), 0 = random
  char manifest[PATH_MAX] = {};  // HEAPREC_MANIFEST: (internal) list of files written
  bool dormant = false;          // HEAPREC_DORMANT: start with sampling off until `heaprec attach`
  bool heap_record = true;       // HEAPREC_NO_HEAP_RECORD=1 turns off the heap record (see record/)
  // HEAPREC_PEAK_AT_ONCE: (internal) the first peak copy is written at once, even while the heap
  // record keeps it: `heaprec run --push` sends each file as it is written (dump/dump_thread.cc).
  bool peak_at_once = false;
  // HEAPREC_UNCOMPRESSED: (internal) profiles are gzip files of stored blocks, written without
  // compressing: `heaprec run`, symbolizing, rewrites every one compressed.
  bool uncompressed = false;
  // HEAPREC_RUNTIME: (internal, set by `heaprec run --ruby`) runtime mode: sampling waits for a
  // language runtime's front end to attach, and the front end writes every profile
  // (include/heaprec/runtime.h); the library writes none and installs no signal handler.
  bool runtime = false;
};

inline constexpr std::uint32_t kMaxStackDepth = 1024;

// Who reads a variable (SettingRow::readers, a set of these).
enum SettingReader : std::uint8_t {
  kReadByLibrary = 1,     // ReadSettings, in libheaprec.so
  kReadByHttpServer = 2,  // the HTTP endpoint, at start-up (http/server.h)
  kReadByRuby = 4,        // the Ruby front end (ruby/lib/heaprec/autorun.rb)
};

// One HEAPREC_* variable.
struct SettingRow {
  const char* variable;    // HEAPREC_SAMPLE_INTERVAL
  const char* run_flag;    // `heaprec run`'s flag that sets it, or null (set by heaprec itself)
  const char* value_name;  // the flag's value in help (BYTES), or null: a switch, exported as 1
  std::uint8_t readers;    // SettingReader bits
  // Reads `text` into *settings; false when it is not accepted, and then *detail may say why in a
  // whole phrase ("port out of range ...") that replaces "expected <expected>". Rows not read by
  // the library parse into a scratch Settings.
  bool (*parse)(const char* text, Settings* settings, const char** detail);
  const char* expected;  // what it accepts, for the one line a bad value gets
};

// Every variable, in the order ReadSettings checks them (the first bad one is reported).
struct SettingTable {
  const SettingRow* rows;
  std::size_t count;
  const SettingRow* begin() const { return rows; }
  const SettingRow* end() const { return rows + count; }
};
SettingTable AllSettings();

// The row of `heaprec run`'s flag (as "--dump-signal"), or null.
const SettingRow* FindSettingByFlag(const char* flag);

inline constexpr const char kDefaultOutputTemplate[] = "heaprec.%e.%p.pb.gz";

// Reads the environment into *settings. Returns false after printing one line on stderr when a
// value is bad. No malloc, no locks.
bool ReadSettings(Settings* settings);

// The parsers behind the rows, exposed for tests and for `heaprec attach`.
bool ParseByteCount(const char* text, std::uint64_t* bytes);
bool ParseSeconds(const char* text, std::uint64_t* milliseconds);
bool ParseSignal(const char* text, int* signal_number);
bool ParseMaxDepth(const char* text, std::uint32_t* depth);  // 1 to kMaxStackDepth
bool ParseSeed(const char* text, std::uint64_t* seed);       // any unsigned 64-bit integer
bool IsTrue(const char* text);  // a switch that is on: 1, true, yes or on, in any case

}  // namespace heaprec::preload
