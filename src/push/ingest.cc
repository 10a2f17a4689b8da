#include "push/ingest.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace heaprec::push {
namespace {

constexpr std::size_t kMaxNameLength = 1024;   // validation.max-length-label-name
constexpr std::size_t kMaxValueLength = 2048;  // validation.max-length-label-value
constexpr std::string_view kProfileExtension = ".pb.gz";
constexpr std::string_view kPeakInfix = ".peak";

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAppNameChar(char c) {
  return IsAsciiLetter(c) || IsDigit(c) || c == '_' || c == '.' || c == '-' || c == '/';
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Whether `text` is well-formed UTF-8 (Prometheus's LabelValue.IsValid is utf8.ValidString).
bool IsUtf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    int extra = 0;
    if (c >= 0x80) {
      if ((c & 0xE0) == 0xC0) {
        extra = 1;
      } else if ((c & 0xF0) == 0xE0) {
        extra = 2;
      } else if ((c & 0xF8) == 0xF0) {
        extra = 3;
      } else {
        return false;
      }
    }
    for (int k = 1; k <= extra; ++k) {
      if (i + k >= text.size() || (static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) {
        return false;
      }
    }
    i += 1 + extra;
  }
  return true;
}

// Removes a trailing "-N" (the name heaprec picks beside another process's file).
std::string_view WithoutCopyNumber(std::string_view stem) {
  std::size_t dash = stem.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == stem.size()) return stem;
  for (char c : stem.substr(dash + 1)) {
    if (!IsDigit(c)) return stem;
  }
  return stem.substr(0, dash);
}

}  // namespace

std::string CheckAppName(std::string_view app) {
  if (app.empty()) return "the application name is empty";
  if (app.size() > kMaxValueLength) {
    return "the application name is longer than " + std::to_string(kMaxValueLength) + " bytes";
  }
  for (char c : app) {
    if (!IsAppNameChar(c)) {
      return std::string("the application name has '") + c +
             "': only letters, digits and _ . - / are allowed";
    }
  }
  return "";
}

std::string SanitizeAppName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!IsAppNameChar(c)) c = '_';
  }
  return out.substr(0, kMaxValueLength);
}

std::string ParseLabel(std::string_view text, Label* label) {
  std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) return "expected NAME=VALUE";
  std::string_view name = text.substr(0, eq), value = text.substr(eq + 1);
  if (name.empty()) return "the label name is empty";
  if (name.size() > kMaxNameLength) return "the label name is longer than 1024 characters";
  if (!IsAsciiLetter(name[0]) && name[0] != '_') {
    return "the label name must start with a letter or _";
  }
  for (char c : name) {
    if (!IsAsciiLetter(c) && !IsDigit(c) && c != '_') {
      return std::string("the label name has '") + c + "': only letters, digits and _ are allowed";
    }
  }
  if (name.substr(0, 2) == "__") return "label names starting with __ are reserved";
  if (name == "service_name") return "service_name is set from --app";
  if (name == "pyroscope_spy") return "pyroscope_spy is set by Pyroscope";
  if (value.empty()) return "the label value is empty";
  if (value.size() > kMaxValueLength) return "the label value is longer than 2048 bytes";
  if (value.front() == ' ' || value.back() == ' ') {
    return "the label value has leading or trailing spaces";
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return "the label value has a control character";
    if (c == ',' || c == '{' || c == '}' || c == '=' || c == '"') {
      return std::string("the label value has '") + c + "', which the name syntax cannot carry";
    }
  }
  if (!IsUtf8(value)) return "the label value is not UTF-8";
  label->name = std::string(name);
  label->value = std::string(value);
  return "";
}

std::string CheckLabels(const std::vector<Label>& labels) {
  if (labels.size() > kMaxUserLabels) {
    return "more than " + std::to_string(kMaxUserLabels) + " labels";
  }
  std::set<std::string> seen;
  for (const Label& l : labels) {
    if (!seen.insert(l.name).second) return "the label " + l.name + " is given twice";
  }
  return "";
}

std::string IngestName(std::string_view app, const std::vector<Label>& labels) {
  std::string name(app);
  name += '{';
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i != 0) name += ',';
    name += labels[i].name + "=" + labels[i].value;
  }
  name += '}';
  return name;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (IsAsciiLetter(c) || IsDigit(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

std::string IngestUrl(std::string_view server, std::string_view name, std::int64_t from_seconds,
                      std::int64_t until_seconds) {
  std::string url(server);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (!EndsWith(url, "/ingest")) url += "/ingest";
  url += "?name=" + PercentEncode(name) + "&from=" + std::to_string(from_seconds) +
         "&until=" + std::to_string(until_seconds) + "&format=pprof";
  return url;
}

std::string RedactedUrl(std::string_view url) {
  std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  std::size_t host = scheme + 3;
  std::size_t at = url.find('@', host), slash = url.find('/', host);
  if (at == std::string_view::npos || (slash != std::string_view::npos && at > slash)) {
    return std::string(url);
  }
  return std::string(url.substr(0, host)) + "***" + std::string(url.substr(at));
}

TimeRange SnapshotRange(std::int64_t time_nanos) {
  std::int64_t seconds = time_nanos / 1000000000;
  if (time_nanos < 0 && time_nanos % 1000000000 != 0) --seconds;  // floor, not truncation
  return {seconds, seconds + 1};
}

Outcome Classify(long status) {
  if (status >= 200 && status < 300) return Outcome::kAccepted;
  if (status == 0 || status == 408 || status == 429 || status >= 500) return Outcome::kRetry;
  return Outcome::kRejected;
}

double RetryDelaySeconds(int failures, double initial, double max, double random01) {
  double delay = initial * std::ldexp(1.0, std::clamp(failures, 1, 62) - 1);
  delay = std::min(delay, max);
  return delay * (0.5 + 0.5 * std::clamp(random01, 0.0, 1.0));
}

bool IsCompleteProfileName(std::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  if (name.find(".tmp.") != std::string_view::npos) return false;
  return EndsWith(name, kProfileExtension) && name.size() > kProfileExtension.size();
}

bool IsPeakProfile(std::string_view name) {
  if (!EndsWith(name, kProfileExtension)) return false;
  std::string_view stem = WithoutCopyNumber(name.substr(0, name.size() - kProfileExtension.size()));
  return EndsWith(stem, kPeakInfix);
}

std::string FinalNameOfPeak(std::string_view peak_name) {
  std::string_view stem = peak_name.substr(0, peak_name.size() - kProfileExtension.size());
  stem = WithoutCopyNumber(stem);
  stem = stem.substr(0, stem.size() - kPeakInfix.size());
  return std::string(stem) + std::string(kProfileExtension);
}

std::string AppNameFromFileName(std::string_view path) {
  std::string_view name =
      path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  if (EndsWith(name, kProfileExtension)) name.remove_suffix(kProfileExtension.size());
  name = WithoutCopyNumber(name);
  if (EndsWith(name, kPeakInfix)) name.remove_suffix(kPeakInfix.size());
  // Trailing all-digit components: the pid, the dump's sequence number.
  while (true) {
    std::size_t dot = name.rfind('.');
    std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
    if (last.empty() || !std::all_of(last.begin(), last.end(), IsDigit)) break;
    name = dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
  }
  constexpr std::string_view kPrefix = "heaprec.";
  if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
  std::string app = SanitizeAppName(name);
  return app.empty() ? "heaprec" : app;
}

}  // namespace heaprec::push
