#include "push/pusher.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "base/file_io.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "profile/profile_error.h"
#include "symbolize/coverage.h"
#include "symbolize/symbolizer.h"

namespace heaprec::push {
namespace {

std::string DescribeResponse(const Response& r) {
  if (r.status == 0) return r.detail;
  return "HTTP " + std::to_string(r.status) + (r.detail.empty() ? "" : ": " + r.detail);
}

}  // namespace

Pusher::Pusher(PushConfig config, Transport* transport, Ledger* ledger, std::ostream* log)
    : config_(std::move(config)),
      transport_(transport),
      ledger_(ledger),
      log_(log),
      random_(std::random_device{}()) {}

Pusher::~Pusher() = default;

bool Pusher::Offer(const std::string& path) {
  for (const Queued& q : queue_) {
    if (q.path == path) return false;
  }
  if (ledger_->Lookup(Identify(path)) != FileState::kUnknown) return false;
  queue_.push_back(Queued{path, 0, 0, ""});
  return true;
}

Pusher::Request Pusher::BuildRequest(const std::string& path) {
  Request request;
  request.body = base::ReadFile(path);
  profile::Profile p = profile::ReadProfile(request.body, path);
  // Pyroscope refuses a profile whose sample type has a '-' (validation.ValidateProfile).
  for (const profile::ValueType& type : p.sample_types) {
    if (type.type.find('-') != std::string::npos) {
      throw profile::ProfileError(path + ": the sample type '" + type.type +
                                  "' has a '-', which Pyroscope refuses");
    }
  }
  if (config_.symbolize && symbolize::MeasureCoverage(p).NeedsSymbolizing()) {
    if (symbolizer_ == nullptr) {
      symbolize::SymbolizeOptions options = symbolize::CommandLineSymbolizeOptions();
      if (!config_.symbol_cache) options.cache_directory.clear();
      symbolizer_ = std::make_unique<symbolize::Symbolizer>(std::move(options));
    }
    symbolizer_->Symbolize(p);
    request.body = profile::EncodeProfile(p, true);
  }
  std::int64_t time_nanos = p.time_nanos;
  if (time_nanos <= 0) time_nanos = Identify(path).mtime_ns;
  TimeRange range = SnapshotRange(time_nanos);
  std::string app = config_.app.empty() ? AppNameFromFileName(path) : config_.app;
  request.url = IngestUrl(config_.server, IngestName(app, config_.labels), range.from, range.until);
  return request;
}

void Pusher::Finish(const Queued& item, FileState state) {
  std::string error = ledger_->Record(Identify(item.path), state);
  if (!error.empty()) {
    *log_ << config_.log_prefix << ": cannot record what was pushed: " << error << "\n";
  }
}

double Pusher::Step(double now, const std::function<bool()>& stop) {
  for (std::size_t i = 0; i < queue_.size();) {
    Queued& item = queue_[i];
    if (stop && stop()) break;
    if (item.due > now) {
      ++i;
      continue;
    }
    Request request;
    try {
      request = BuildRequest(item.path);
    } catch (const std::exception& error) {
      *log_ << config_.log_prefix << ": not pushed: " << error.what() << "; kept on disk\n";
      refused_.push_back(item.path + " (" + error.what() + ")");
      ++rejected_;
      Finish(item, FileState::kRejected);
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    Response response = transport_->Post(request.url, config_.headers, request.body);
    switch (Classify(response.status)) {
      case Outcome::kAccepted:
        ++accepted_;
        if (config_.log_accepted) *log_ << config_.log_prefix << ": pushed " << item.path << "\n";
        Finish(item, FileState::kAccepted);
        queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      case Outcome::kRejected: {
        std::string why = "refused by the server, " + DescribeResponse(response);
        *log_ << config_.log_prefix << ": " << item.path << " " << why
              << "; kept on disk, not sent again\n";
        refused_.push_back(item.path + " (" + why + ")");
        ++rejected_;
        Finish(item, FileState::kRejected);
        queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      case Outcome::kRetry: {
        ++item.failures;
        item.last_error = DescribeResponse(response);
        double jitter = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
        item.due = now + RetryDelaySeconds(item.failures, config_.retry_initial_seconds,
                                           config_.retry_max_seconds, jitter);
        // One line per new kind of failure, not one per attempt.
        if (item.last_error != last_logged_error_) {
          last_logged_error_ = item.last_error;
          *log_ << config_.log_prefix << ": cannot push to " << config_.server << " yet ("
                << item.last_error << "); retrying\n";
        }
        ++i;
        break;
      }
    }
  }
  double next = std::numeric_limits<double>::infinity();
  for (const Queued& q : queue_) next = std::min(next, q.due);
  return next;
}

std::vector<std::string> Pusher::NotAccepted() const {
  std::vector<std::string> lines;
  for (const Queued& q : queue_) {
    lines.push_back(q.path + " (" + (q.last_error.empty() ? "not sent yet" : q.last_error) + ")");
  }
  lines.insert(lines.end(), refused_.begin(), refused_.end());
  return lines;
}

}  // namespace heaprec::push
