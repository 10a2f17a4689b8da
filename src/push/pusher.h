// The queue of profiles to push, shared by `heaprec run --push` and `heaprec agent`: each file
// offered is read, symbolized in memory (the file is left as it is), and POSTed to Pyroscope's
// /ingest (ingest.h), once per attempt; an answer that may change (no answer, 408, 429, 5xx) is
// retried after a growing delay, any other refusal is final. What was accepted or refused is
// recorded in the ledger (ledger.h). The pusher never deletes a file, and runs on the caller's
// thread: Step does the work that is due and says when more will be.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "push/ingest.h"
#include "push/ledger.h"
#include "push/transport.h"

namespace heaprec::symbolize {
class Symbolizer;
}

namespace heaprec::push {

struct PushConfig {
  std::string server;                // the URL given to --push
  std::string app;                   // "" = AppNameFromFileName of each file
  std::vector<Label> labels;         // --label, checked (ParseLabel, CheckLabels)
  std::vector<std::string> headers;  // --push-header "Name: value"
  double retry_initial_seconds = 1;  // the first retry's delay, doubled each time
  double retry_max_seconds = 60;
  bool symbolize = true;               // name what the file lacks, in memory, before sending it
  bool symbol_cache = true;            // with the on-disk symbol cache (false: --no-cache)
  std::string log_prefix = "heaprec";  // of every line the pusher prints
  bool log_accepted = false;           // a line per accepted file (the agent's log)
};

class Pusher {
 public:
  Pusher(PushConfig config, Transport* transport, Ledger* ledger, std::ostream* log);
  ~Pusher();

  // Queues the file unless the ledger has it or it is queued already; returns whether it was
  // queued.
  bool Offer(const std::string& path);

  // Sends each queued file whose attempt is due at `now` (MonotonicNow seconds), in the order
  // offered, until `stop` (checked before each request) says to stop; returns the time of the next
  // attempt due (infinity when none is queued).
  double Step(double now, const std::function<bool()>& stop = {});

  std::size_t queued() const { return queue_.size(); }
  std::size_t accepted() const { return accepted_; }
  std::size_t rejected() const { return rejected_; }

  // One line per file not accepted: queued ones (with their last error) and refused ones, "PATH
  // (why)".
  std::vector<std::string> NotAccepted() const;

  // What the request for this file would be: the URL (ingest.h) and the body. Throws
  // profile::ProfileError when the file is not a profile Pyroscope could take.
  struct Request {
    std::string url;
    std::string body;
  };
  Request BuildRequest(const std::string& path);

 private:
  struct Queued {
    std::string path;
    int failures = 0;
    double due = 0;
    std::string last_error;
  };
  void Finish(const Queued& item, FileState state);
  PushConfig config_;
  Transport* transport_;
  Ledger* ledger_;
  std::ostream* log_;
  std::vector<Queued> queue_;
  std::vector<std::string> refused_;  // "PATH (why)"
  std::size_t accepted_ = 0, rejected_ = 0;
  std::string last_logged_error_;
  std::mt19937_64 random_;
  std::unique_ptr<symbolize::Symbolizer> symbolizer_;
};

}  // namespace heaprec::push
