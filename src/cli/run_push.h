// `heaprec run --push`: a thread of the heaprec command (never of the program) that reads the run's
// manifest while the program runs and pushes each profile as soon as it is listed (every complete
// file: the library renames a profile into place before listing it), then, once the program has
// ended, pushes what is left for at most --push-timeout seconds. Peak profiles are pushed only for
// a process that ended without a final profile (SIGKILL, the OOM killer): otherwise the final one
// carries the same live set later, and a peak pushed at each rewrite would count it many times.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/run_manifest.h"
#include "push/pusher.h"

namespace heaprec::cli {

class RunPusher {
 public:
  RunPusher(push::PushConfig config, std::string manifest, double timeout_seconds);
  ~RunPusher();

  // Starts the thread, with every signal blocked in it (they are the program's, forwarded by the
  // main thread). Call it once the program has been started: never before a fork.
  void Start();

  // After the program ended: pushes the rest, waiting at most the timeout (a request in flight is
  // abandoned then), stops the thread and prints one line per profile not accepted, or one line
  // for them all when every one was.
  void Finish();

  // After `heaprec run` rewrote the profiles with their symbols: the ledger follows their new
  // size and time.
  void FollowRewrites(const std::vector<ManifestEntry>& profiles);

 private:
  void Loop();
  void Scan(bool ended);

  push::PushConfig config_;
  std::string manifest_;
  double timeout_seconds_;
  push::CurlTransport transport_;
  push::Ledger ledger_;
  push::Pusher pusher_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool ended_ = false;  // guarded by mutex_
  double deadline_ = 0;
};

}  // namespace heaprec::cli
