#include "cli/run_push.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <set>

#include "cli/push_options.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {
namespace {

// How often the manifest is read while the program runs.
constexpr double kManifestPollSeconds = 0.2;

}  // namespace

RunPusher::RunPusher(push::PushConfig config, std::string manifest, double timeout_seconds)
    : config_(config),
      manifest_(std::move(manifest)),
      timeout_seconds_(timeout_seconds),
      transport_(push::CurlTimeouts{}),
      pusher_(std::move(config), &transport_, &ledger_, &std::cerr) {}

RunPusher::~RunPusher() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ended_ = true;
      deadline_ = push::MonotonicNow();
    }
    transport_.AbortAt(0);
    wake_.notify_all();
    thread_.join();
  }
}

void RunPusher::Start() {
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &saved);
  thread_ = std::thread([this] { Loop(); });
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

void RunPusher::Scan(bool ended) {
  Manifest manifest = ReadManifest(manifest_);
  std::map<pid_t, std::string> peaks;
  std::set<pid_t> finished;
  for (const ManifestEntry& e : manifest.profiles) {
    if (e.reason == schema::kReasonPeak) {
      peaks[e.pid] = e.path;
      continue;
    }
    if (schema::IsFinalReason(e.reason)) finished.insert(e.pid);
    pusher_.Offer(e.path);
  }
  if (!ended) return;
  for (const auto& [pid, path] : peaks) {
    if (finished.count(pid) == 0) pusher_.Offer(path);
  }
}

void RunPusher::Loop() {
  while (true) {
    bool ended;
    double deadline;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ended = ended_;
      deadline = deadline_;
    }
    Scan(ended);
    double next = pusher_.Step(push::MonotonicNow());
    double now = push::MonotonicNow();
    if (ended && (pusher_.queued() == 0 || now >= deadline)) return;
    double wait = std::min(next - now, ended ? deadline - now : kManifestPollSeconds);
    wait = std::clamp(wait, 0.001, kManifestPollSeconds);
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(wait), [&] { return ended_ != ended; });
  }
}

void RunPusher::Finish() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
    deadline_ = push::MonotonicNow() + timeout_seconds_;
  }
  transport_.AbortAt(push::MonotonicNow() + timeout_seconds_);
  wake_.notify_all();
  thread_.join();
  std::vector<std::string> not_pushed = pusher_.NotAccepted();
  if (not_pushed.empty()) {
    std::cerr << "heaprec: pushed " << pusher_.accepted() << " profile"
              << (pusher_.accepted() == 1 ? "" : "s") << " to " << push::RedactedUrl(config_.server)
              << "\n";
  }
  PrintNotPushed("heaprec", not_pushed, config_);
}

void RunPusher::FollowRewrites(const std::vector<ManifestEntry>& profiles) {
  for (const ManifestEntry& e : profiles) {
    std::string error = ledger_.Refresh(e.path);
    if (!error.empty()) std::cerr << "heaprec: cannot record what was pushed: " << error << "\n";
  }
}

}  // namespace heaprec::cli
