#include "preload/dump/dump.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "core/arena.h"
#include "core/gzip_file_sink.h"
#include "core/manifest_writer.h"
#include "core/mutex.h"
#include "core/profile_file.h"
#include "preload/dump/peak.h"
#include "preload/dump/profile_writer.h"
#include "preload/http/served_symbols.h"
#include "preload/messages.h"
#include "preload/record/heap_record.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "schema/manifest.h"

namespace heaprec::preload {
namespace {

Mutex g_dump_mutex;
unsigned g_dump_sequence = 0;  // guarded by g_dump_mutex
// Written under g_dump_mutex; read without it by the peak writer, which must not start a write the
// process's exit could cut short (a killed write leaves its temporary file behind).
std::atomic<bool> g_final_dump_done{false};

// Where a dump goes: the caller's path, or the next name from the output template. Called with
// g_dump_mutex held.
bool ChooseTarget(DumpReason reason, const char* path, char* target, std::size_t capacity) {
  if (path != nullptr) {
    std::size_t length = strlen(path);
    if (length == 0 || length >= capacity) return false;
    memcpy(target, path, length + 1);
    return true;
  }
  return ExpandProfileName(IsFinal(reason) ? 0 : ++g_dump_sequence, target, capacity);
}

// Writes a profile and reports it: in the manifest for `heaprec run`, and for a dump the user asked
// for with a signal, one line (unless quiet); a failure always gets one line.
int WriteAndReport(HeapSnapshot& snapshot, DumpReason reason, int signal_number, const char* target,
                   std::uint64_t taken_ns, WriteOptions options) {
  char written[PATH_MAX];
  options.written_path = written;
  options.written_capacity = sizeof(written);
  int error = WriteProfile(snapshot, reason, signal_number, target, taken_ns, options);
  if (error != 0) {
    const char* parts[] = {"heaprec: could not write profile '", target,
                           "': ", strerrordesc_np(error), "\n"};
    ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
    if (g_settings.manifest[0] != '\0') {
      AppendToManifest(g_settings.manifest, getpid(), schema::kManifestUnwritten, target);
    }
    return error;
  }
  if (g_settings.manifest[0] != '\0') {
    AppendToManifest(g_settings.manifest, getpid(), ReasonName(reason), written);
  }
  if (reason == DumpReason::kSignal && !g_settings.quiet) {
    const char* parts[] = {"heaprec: wrote ", written, " (on signal)\n"};
    ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
  }
  return 0;
}

int DumpAs(DumpReason reason, const char* path, int signal_number) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  // In runtime mode the runtime's front end writes every profile (runtime/runtime.h).
  if (recorder == nullptr || g_settings.runtime) return ENOSYS;
  HookGuard guard;
  MutexLock lock(g_dump_mutex);
  if (g_final_dump_done.load() && reason != DumpReason::kApi) return 0;
  char target[PATH_MAX];
  if (!ChooseTarget(reason, path, target, sizeof(target))) return ENAMETOOLONG;
  if (IsFinal(reason)) g_final_dump_done.store(true);
  HeapSnapshot snapshot;
  // Only the API's explicit path may replace a file; named by the template, nothing is lost.
  WriteOptions options = path != nullptr ? WriteOptions() : KeepingNewerFiles();
  char written[PATH_MAX] = {};
  options.written_path = written;
  options.written_capacity = sizeof(written);
  int error =
      snapshot.Take(*recorder, SnapshotGrouping::kBySite)
          ? WriteAndReport(snapshot, reason, signal_number, target, NowNs(CLOCK_REALTIME), options)
          : ENOMEM;
  if (IsFinal(reason)) {
    WritePeakNextTo(written[0] != '\0' ? written : target);
    // The final profile tells what the record would: its file goes. A final profile that could not
    // be written leaves the record, marked with this ending, which `heaprec run` (or `heaprec
    // recover`) turns into that profile.
    if (error == 0) {
      LockPeak();  // EndHeapRecord with the dump locks held, as exec has them
      EndHeapRecord();
      UnlockPeak();
    } else {
      KeepHeapRecordOfUnwrittenEnding(reason, signal_number, error);
    }
  }
  return error;
}

}  // namespace

int Dump(DumpReason reason, const char* path) { return DumpAs(reason, path, 0); }

int DumpFinal(DumpReason reason, int signal_number) {
  return DumpAs(reason, nullptr, signal_number);
}

bool FinalDumpDone() { return g_final_dump_done.load(); }

int StreamProfile(ByteSink& body, const char* default_sample_type) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return ENOSYS;
  HookGuard guard;
  HeapSnapshot snapshot;
  // The copy is taken under the dump lock, as every dump's; encoding and sending happen without
  // it, so a client that reads slowly or not at all holds nothing the program or its dumps need.
  bool taken;
  {
    MutexLock lock(g_dump_mutex);
    taken = snapshot.Take(*recorder, SnapshotGrouping::kBySite);
  }
  if (!taken) return ENOMEM;
  return WithMetadata(
      snapshot, DumpReason::kHttp, 0, NowNs(CLOCK_REALTIME), [&](const ProfileMetadata& metadata) {
        // With the symbol tables' function names, for clients that cannot symbolize
        // (http/served_symbols.h); addresses only when they cannot be read.
        ServedSymbols names(*g_arena);
        ProfileMetadata named = metadata;
        named.default_sample_type = default_sample_type;
        if (names.Read(snapshot, metadata.mappings, metadata.mapping_count)) named.names = &names;
        errno = 0;
        GzipFileSink sink(body, *g_arena);
        bool ok = sink.ok() && EncodeHeapProfile(snapshot, named, *g_arena, sink) && sink.Finish();
        return ok ? 0 : (errno != 0 ? errno : EIO);
      });
}

void LockDumps() {
  g_dump_mutex.Lock();
  LockPeak();
}

void UnlockDumps() {
  UnlockPeak();
  g_dump_mutex.Unlock();
}

void LockDumpOnly() { g_dump_mutex.Lock(); }
void UnlockDumpOnly() { g_dump_mutex.Unlock(); }

void ResetDumpsAfterForkInChild() {
  g_dump_mutex.ResetAfterFork();
  g_dump_sequence = 0;
  g_final_dump_done.store(false);
  ResetPeakAfterForkInChild();
}

}  // namespace heaprec::preload
