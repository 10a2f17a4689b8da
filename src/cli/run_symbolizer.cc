#include "cli/run_symbolizer.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "cli/symbolization.h"
#include "profile/pprof_reader.h"
#include "render/output_file.h"
#include "schema/manifest.h"
#include "schema/profile_schema.h"
#include "symbolize/coverage.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {
namespace {

// How often the manifest is looked at while the program runs.
constexpr auto kFollowPeriod = std::chrono::milliseconds(50);

// A file as it was when rewritten (or found needing nothing): if the path names another file at
// the end, a process wrote it again since (a later peak, a reused pid) and it is done again.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  timespec modified = {};
  bool operator==(const FileIdentity& o) const {
    return device == o.device && inode == o.inode && size == o.size &&
           modified.tv_sec == o.modified.tv_sec && modified.tv_nsec == o.modified.tv_nsec;
  }
};

bool Identify(const std::string& path, FileIdentity* identity) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  *identity = {st.st_dev, st.st_ino, st.st_size, st.st_mtim};
  return true;
}

// The reasons of a final profile: the process is ending (endings.md), and writes nothing after
// it but its peak profile.
bool IsFinalReason(const std::string& reason) {
  return reason == schema::kReasonExit || reason == schema::kReasonUnderscoreExit ||
         reason == schema::kReasonCrash || reason == schema::kReasonTerminated;
}

// Whether `pid` has ended: no /proc entry, or a zombie its parent has not waited for yet. A pid
// used again by then names another process, whose files are other files (or, written again, are
// caught at the end).
bool ProcessGone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  std::string::size_type end_of_name = text.rfind(')');
  if (end_of_name == std::string::npos || end_of_name + 2 >= text.size()) return false;
  char state = text[end_of_name + 2];
  return state == 'Z' || state == 'X';
}

// The calling thread's nice value (Linux: per thread, by its id): the follower takes only what
// the program leaves of the CPU.
void LowestPriority() { setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19); }

}  // namespace

struct RunSymbolizer::State {
  explicit State(bool symbol_cache) : symbolizer(Options(symbol_cache)) {}

  static symbolize::SymbolizeOptions Options(bool symbol_cache) {
    symbolize::SymbolizeOptions options = symbolize::CommandLineSymbolizeOptions();
    if (!symbol_cache) options.cache_directory.clear();
    return options;
  }

  // Reads, symbolizes and rewrites one profile; false when it could not (noting why when
  // `report`: the follower leaves a failure to the end, which tries again and says why).
  bool Rewrite(const std::string& path, bool report) {
    try {
      // The samples stay encoded: symbolizing changes only the tables.
      profile::RewritableProfile profile = profile::ReadRewritableProfileFile(path);
      // Nothing to add (a Ruby profile without native bytes): the file stays as written.
      if (symbolize::MeasureCoverage(profile.tables).NeedsSymbolizing()) {
        {
          std::lock_guard<std::mutex> lock(symbolizer_mutex);
          symbolizer.Symbolize(profile.tables);
        }
        render::WriteProfileFile(profile, path, &writer);
      }
      FileIdentity identity;
      std::lock_guard<std::mutex> lock(mutex);
      if (Identify(path, &identity)) done[path] = identity;
      return true;
    } catch (const std::exception& error) {
      std::lock_guard<std::mutex> lock(mutex);
      if (report) errors.push_back(error.what());
      return false;
    }
  }

  bool Done(const std::string& path) {
    FileIdentity now;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = done.find(path);
    return it != done.end() && Identify(path, &now) && it->second == now;
  }

  // The follower: rewrites the files of each process that wrote its final profile and is gone.
  void FollowLoop(const std::string& manifest) {
    LowestPriority();
    ManifestTail tail(manifest);
    std::map<pid_t, std::vector<std::string>> files;  // of processes not yet done
    std::set<pid_t> ending;                           // wrote a final profile
    std::unique_lock<std::mutex> lock(follow_mutex);
    while (!stop) {
      lock.unlock();
      for (ManifestEntry& e : tail.ReadNew()) {
        if (!NamesProfile(e)) continue;
        if (IsFinalReason(e.reason)) ending.insert(e.pid);
        std::vector<std::string>& paths = files[e.pid];
        if (std::find(paths.begin(), paths.end(), e.path) == paths.end()) paths.push_back(e.path);
      }
      for (auto it = ending.begin(); it != ending.end() && !stop;) {
        if (!ProcessGone(*it)) {
          ++it;
          continue;
        }
        for (const std::string& path : files[*it]) {
          if (stop) break;
          Rewrite(path, /*report=*/false);
        }
        files.erase(*it);
        it = ending.erase(it);
      }
      lock.lock();
      stop_requested.wait_for(lock, kFollowPeriod, [&] { return stop; });
    }
  }

  // Keeps each replaced file's inode for the next rewrite. Not synced file by file: the processes
  // that wrote the profiles it replaces never synced them either, and on a journaling file system
  // an fsync per profile is a journal commit per profile (docs/design/symbolization.md).
  base::RecyclingWriter writer{base::Durability::kWritebackStarted};
  symbolize::Symbolizer symbolizer;
  std::mutex symbolizer_mutex;  // one worker at a time: its caches serve every profile
  std::mutex mutex;             // guards done and errors
  std::map<std::string, FileIdentity> done;
  std::vector<std::string> errors;  // said at the end: the program may still be writing to stderr

  std::mutex follow_mutex;
  std::condition_variable stop_requested;
  bool stop = false;  // guarded by follow_mutex
  std::thread follower;
};

RunSymbolizer::RunSymbolizer(bool symbol_cache) : state_(std::make_unique<State>(symbol_cache)) {}

RunSymbolizer::~RunSymbolizer() { StopFollowing(); }

void RunSymbolizer::Follow(const std::string& manifest) {
  state_->follower = std::thread([this, manifest] { state_->FollowLoop(manifest); });
}

void RunSymbolizer::StopFollowing() {
  if (!state_->follower.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(state_->follow_mutex);
    state_->stop = true;
  }
  state_->stop_requested.notify_all();
  state_->follower.join();
}

bool RunSymbolizer::Finish(const std::vector<ManifestEntry>& entries) {
  StopFollowing();
  std::vector<const ManifestEntry*> left;
  for (const ManifestEntry& e : entries) {
    if (!state_->Done(e.path)) left.push_back(&e);
  }
  // Reading (gunzip, parse) and writing (encode, gzip) take most of the time and run on every
  // core; the symbolizer is used by one worker at a time.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> ok{true};
  auto work = [&] {
    for (std::size_t i = next++; i < left.size(); i = next++) {
      if (!state_->Rewrite(left[i]->path, /*report=*/true)) ok = false;
    }
  };
  std::size_t workers =
      std::min<std::size_t>(left.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::string& error : state_->errors) std::cerr << "heaprec: " << error << "\n";
  PrintBinaryNotes("heaprec", state_->symbolizer, std::cerr);
  return ok;
}

}  // namespace heaprec::cli
