// The request heaprec sends to Pyroscope's HTTP ingest API (POST /ingest), built by pure functions
// so that every rule is unit-tested: the application name and its labels, the query, how the
// server's answer is taken, the retry delays, and which files of a directory are profiles to push.
// Where each rule comes from (Pyroscope's documentation or source) is in docs/design/push.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heaprec::push {

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
};

// Pyroscope's limit on label names per series (validation.max-label-names-per-series, 30) less the
// four it adds itself: __name__, __delta__, service_name and pyroscope_spy.
inline constexpr std::size_t kMaxUserLabels = 26;

// "" when `app` is a valid application name: 1 to 1024 characters among A-Z a-z 0-9 _ . - /.
// Otherwise what is wrong, in words.
std::string CheckAppName(std::string_view app);

// `name` with every character Pyroscope does not allow in an application name replaced by '_'
// ("" stays ""): for names heaprec derives itself (a program's name).
std::string SanitizeAppName(std::string_view name);

// Parses "name=value" into *label; "" on success, else what is wrong. The name:
// [a-zA-Z_][a-zA-Z0-9_]*, at most 1024 characters, not starting with "__" and not service_name or
// pyroscope_spy (which Pyroscope sets itself). The value: 1 to 2048 bytes of UTF-8 without control
// characters, without , { } = " and without leading or trailing spaces (the name syntax could not
// carry them).
std::string ParseLabel(std::string_view text, Label* label);

// "" when the labels can be sent together (no name twice, at most kMaxUserLabels), else why not.
std::string CheckLabels(const std::vector<Label>& labels);

// The `name` parameter: "app{k1=v1,k2=v2}" (labels in the order given; "app{}" without labels).
std::string IngestName(std::string_view app, const std::vector<Label>& labels);

// The URL to POST to: the server's URL with "/ingest" appended (unless it already ends with it),
// then ?name=...&from=...&until=...&format=pprof, the name percent-encoded. `server` is the
// address the user gave (http://host:4040, https://user:password@host/prefix).
std::string IngestUrl(std::string_view server, std::string_view name, std::int64_t from_seconds,
                      std::int64_t until_seconds);

// The URL for messages: "user:password@" replaced by "***@".
std::string RedactedUrl(std::string_view url);

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string PercentEncode(std::string_view text);

// from and until for a heap snapshot taken at `time_nanos` (Unix ns): the second it falls in,
// [floor(t), floor(t) + 1].
struct TimeRange {
  std::int64_t from = 0;
  std::int64_t until = 0;
};
TimeRange SnapshotRange(std::int64_t time_nanos);

// What an answer means for the file sent.
enum class Outcome {
  kAccepted,  // 2xx
  kRetry,     // no answer (connection refused, timeout, ...), 408, 429, 5xx
  kRejected,  // any other status: the server will never take this request
};
// `status` is the HTTP status, or 0 when no answer came.
Outcome Classify(long status);

// The delay before attempt number `failures` + 1 after `failures` failed ones (>= 1): `initial`
// doubled per failure, at most `max`, times a jitter factor in [0.5, 1) drawn from `random01`
// (in [0, 1)), so that agents restarted together do not retry in step.
double RetryDelaySeconds(int failures, double initial, double max, double random01);

// Which file names in a directory are pushed: complete profiles ("*.pb.gz", not heaprec's
// temporaries "*.tmp.*", not hidden). Peak profiles are listed too: IsPeakProfile tells them.
bool IsCompleteProfileName(std::string_view name);
// "NAME.peak.pb.gz" (or "NAME.peak-2.pb.gz", the name a peak takes beside another's file).
bool IsPeakProfile(std::string_view name);
// The final profile's name a peak profile's belongs beside: "x.12.peak.pb.gz" -> "x.12.pb.gz".
std::string FinalNameOfPeak(std::string_view peak_name);

// The application name heaprec gives a file when none is set: its name without the directory,
// the ".pb.gz", a "-N" suffix, ".peak", numbered components (pid, sequence) and a leading
// "heaprec." — the %e part of the default template heaprec.%e.%p.pb.gz — made a valid name;
// "heaprec" when nothing is left.
std::string AppNameFromFileName(std::string_view path);

}  // namespace heaprec::push
