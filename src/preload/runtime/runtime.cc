// The runtime interface of include/heaprec/runtime.h, on the preload library's recorder.
//
// Why the runtime's front end writes the profile rather than this library: its objects, their
// liveness, its frames' names and its triggers (dump signal, HTTP endpoint, peak, checkpoints) are
// all its own, and a profile of native blocks alone would leave the user two files to add up. So
// in runtime mode the library records and the front end reads (heaprec_runtime_live_blocks); the
// library's own outputs (profiles at exit, dumps, the heap record) stay off (startup.cc, dump.cc).
#include "preload/runtime/runtime.h"

#include <errno.h>

#include <atomic>

#include "core/heap_snapshot.h"
#include "heaprec/runtime.h"
#include "preload/alloc/sampling.h"
#include "preload/control/settings.h"
#include "preload/export.h"
#include "preload/objects/process_mappings.h"
#include "preload/startup.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "preload/unwind/cfi_unwinder.h"
#include "preload/unwind/unwinder.h"

namespace heaprec::preload {
namespace {

std::atomic<heaprec_stack_completer> g_completer{nullptr};

}  // namespace

std::uint32_t CompleteWithRuntimeFrames(std::uint64_t* frames, std::uint32_t depth,
                                        std::uint32_t capacity) {
  heaprec_stack_completer completer = g_completer.load(std::memory_order_acquire);
  if (completer == nullptr) return depth;
  return completer(frames, depth, capacity);
}

}  // namespace heaprec::preload

using heaprec::HeapRecorder;
using namespace heaprec::preload;  // NOLINT(google-build-using-namespace): the C entry points

HEAPREC_EXPORT uint64_t heaprec_runtime_attach(heaprec_stack_completer completer) {
  if (!g_settings.runtime || g_arena == nullptr || completer == nullptr) return 0;
  HookGuard guard;
  StartRecording();
  g_completer.store(completer, std::memory_order_release);
  SetSampling(true);
  return g_interval.load(std::memory_order_relaxed);
}

HEAPREC_EXPORT void heaprec_runtime_detach(void) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return;
  HookGuard guard;
  SetSampling(false);
  g_completer.store(nullptr, std::memory_order_release);
  recorder->ForgetAll();
  recorder->ClearAllocationHistory();
}

HEAPREC_EXPORT int heaprec_runtime_live_blocks(
    int (*visit)(void* context, const heaprec_runtime_blocks* group),
    void (*visit_mapping)(void* context, const heaprec_runtime_mapping* mapping), void* context) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr || g_completer.load(std::memory_order_acquire) == nullptr) {
    return -ENOSYS;
  }
  HookGuard guard;
  heaprec::HeapSnapshot snapshot;
  if (!snapshot.Take(*recorder, heaprec::SnapshotGrouping::kBySite)) return -ENOMEM;
  std::uint64_t frames[kMaxStackDepth + kCaptureExtraFrames];
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    const heaprec::HeapSnapshot::Object& o = snapshot.objects()[i];
    heaprec::StackFrames stack = snapshot.Frames(o.stack, frames, sizeof(frames) / sizeof(*frames));
    heaprec_runtime_blocks group = {stack.frames, stack.depth, o.size,
                                    o.weight,     o.count,     o.alloc_time_ns};
    if (visit(context, &group) == 0) break;
  }
  ProcessMappings mappings(*g_arena);
  if (!mappings.Read(snapshot)) return -ENOMEM;
  for (std::size_t i = 0; i < mappings.count(); ++i) {
    const heaprec::ProfileMapping& m = mappings.mappings()[i];
    const heaprec_runtime_mapping mapping = {m.start, m.limit, m.file_offset, m.path, m.build_id};
    visit_mapping(context, &mapping);
  }
  return 0;
}

HEAPREC_EXPORT int64_t heaprec_runtime_live_bytes(void) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr || g_completer.load(std::memory_order_acquire) == nullptr) return 0;
  return recorder->LiveBytesEstimate();
}

HEAPREC_EXPORT uint32_t heaprec_runtime_native_stack(uint64_t* frames, uint32_t capacity) {
  if (g_arena == nullptr || capacity == 0) return 0;
  HookGuard guard;
  const WalkStart start = HEAPREC_CALLER_OF_THIS_FUNCTION();
  std::uint64_t walked[kMaxStackDepth + kCaptureExtraFrames];
  std::uint32_t max_depth = capacity < kMaxStackDepth ? capacity : kMaxStackDepth;
  bool truncated = false;
  std::uint32_t depth = CaptureStack(walked, max_depth, &truncated, &start);
  for (std::uint32_t i = 0; i < depth; ++i) frames[i] = walked[i];
  return depth;
}
