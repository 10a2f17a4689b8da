#include "preload/control/settings.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdlib>

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

// One line on stderr, assembled without stdio (stdio may allocate or hold locks).
void Complain(const char* variable, const char* value, const char* expected) {
  const char* parts[] = {"heaprec: ",
                         variable,
                         "='",
                         value,
                         "' is invalid: expected ",
                         expected,
                         "; profiling is off for this process\n"};
  for (const char* part : parts) {
    ssize_t ignored = write(STDERR_FILENO, part, strlen(part));
    (void)ignored;
  }
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

bool ReadSettings(Settings* settings) {
  memcpy(settings->output_template, kDefaultOutputTemplate, sizeof(kDefaultOutputTemplate));
  const char* value;
  if ((value = EnvironmentValue("HEAPREC_SAMPLE_INTERVAL")) != nullptr &&
      !ParseByteCount(value, &settings->sample_interval)) {
    Complain("HEAPREC_SAMPLE_INTERVAL", value,
             "a byte count such as 524288, 512K or 2M (1 = exact)");
    return false;
  }
  if ((value = EnvironmentValue("HEAPREC_OUTPUT")) != nullptr &&
      !CopyPath(value, settings->output_template, sizeof(settings->output_template))) {
    Complain("HEAPREC_OUTPUT", value, "a non-empty path template shorter than PATH_MAX");
    return false;
  }
  if ((value = EnvironmentValue("HEAPREC_DUMP_INTERVAL")) != nullptr &&
      !ParseSeconds(value, &settings->dump_interval_ms)) {
    Complain("HEAPREC_DUMP_INTERVAL", value, "seconds such as 10 or 0.5 (0 = off)");
    return false;
  }
  if ((value = EnvironmentValue("HEAPREC_DUMP_SIGNAL")) != nullptr && value[0] != '\0' &&
      !ParseSignal(value, &settings->dump_signal)) {
    Complain("HEAPREC_DUMP_SIGNAL", value,
             "a signal name such as SIGUSR2, USR1, HUP, or its number");
    return false;
  }
  if ((value = EnvironmentValue("HEAPREC_DUMP_ABOVE")) != nullptr && value[0] != '\0' &&
      !ParseByteCount(value, &settings->dump_above)) {
    Complain("HEAPREC_DUMP_ABOVE", value, "a byte count such as 100M or 2G (0 = off)");
    return false;
  }
  if ((value = EnvironmentValue("HEAPREC_QUIET")) != nullptr) {
    if (IsTrue(value) || EqualsIgnoreCase(value, "1")) {
      settings->quiet = true;
    } else if (!IsFalse(value) && value[0] != '\0') {
      Complain("HEAPREC_QUIET", value, "1 or 0");
      return false;
    }
  }
  if ((value = EnvironmentValue("HEAPREC_MAX_DEPTH")) != nullptr &&
      !ParseMaxDepth(value, &settings->max_depth)) {
    Complain("HEAPREC_MAX_DEPTH", value, "a frame count from 1 to 1024");
    return false;
  }
  if ((value = EnvironmentValue("HEAPREC_UNWIND")) != nullptr) {
    // "libunwind" is the name the DWARF unwinder had when heaprec used libunwind for it.
    if (EqualsIgnoreCase(value, "dwarf") || EqualsIgnoreCase(value, "libunwind")) {
      settings->unwind = UnwindMethod::kDwarf;
    } else if (EqualsIgnoreCase(value, "libgcc")) {
      settings->unwind = UnwindMethod::kLibgcc;
    } else if (EqualsIgnoreCase(value, "check")) {
      settings->unwind = UnwindMethod::kCheck;
    } else if (EqualsIgnoreCase(value, "fp")) {
      settings->unwind = UnwindMethod::kFramePointers;
    } else {
      Complain("HEAPREC_UNWIND", value, "dwarf, libgcc, check or fp");
      return false;
    }
  }
  if ((value = EnvironmentValue("HEAPREC_NO_FOLLOW")) != nullptr) {
    const char* p = value;
    std::uint64_t pid = 0;
    if (IsFalse(value)) {
      settings->no_follow = false;
    } else if (EqualsIgnoreCase(value, "1") || IsTrue(value)) {
      settings->no_follow = true;
    } else if (ParseUnsigned(&p, &pid) && *p == '\0' && pid > 1 && pid < (1u << 22)) {
      settings->no_follow = true;
      settings->only_pid = static_cast<int>(pid);
    } else {
      Complain("HEAPREC_NO_FOLLOW", value, "1 (this process only) or 0");
      return false;
    }
  }
  if ((value = EnvironmentValue("HEAPREC_SEED")) != nullptr && !ParseSeed(value, &settings->seed)) {
    Complain("HEAPREC_SEED", value, "an unsigned integer");
    return false;
  }
  if ((value = EnvironmentValue(schema::kManifestVariable)) != nullptr && value[0] != '\0' &&
      !CopyPath(value, settings->manifest, sizeof(settings->manifest))) {
    Complain(schema::kManifestVariable, value, "a path shorter than PATH_MAX");
    return false;
  }
  // Attach and detach arrive on the dump signal (docs/design/dormant.md): without one, a dormant
  // process could never be woken.
  if ((value = EnvironmentValue(schema::kDormantVariable)) != nullptr) {
    if (IsTrue(value) || EqualsIgnoreCase(value, "1")) {
      settings->dormant = true;
    } else if (!IsFalse(value) && value[0] != '\0') {
      Complain(schema::kDormantVariable, value, "1 or 0");
      return false;
    }
    if (settings->dormant && settings->dump_signal == 0) {
      Complain(schema::kDormantVariable, value,
               "1 only together with HEAPREC_DUMP_SIGNAL, which carries attach and detach");
      return false;
    }
  }
  return true;
}

}  // namespace heaprec::preload
