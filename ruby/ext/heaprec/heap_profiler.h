// The Ruby front end's profiler: samples object allocations through the VM's NEWOBJ event and
// records the sampled objects in the same HeapRecorder the native front end uses.
//
//   NEWOBJ hook ─▶ ObjectSampler ─▶ rb_profile_frames ─▶ FrameRegistry ─▶ pending list
//                                   (no Ruby allocation, no GC: capture only)
//   postponed job / dump ─▶ DrainPending: key (rb_obj_id, or with the weak map a counter and a
//                           map entry), ClassRegistry ─▶ HeapRecorder.Record(key, history tag =
//                           class index): live set + allocation history
//   FREEOBJ hook ─▶ had an id and is tracked? ─▶ HeapRecorder.Forget   (a hint, see OnFreeObject;
//                   object ids only, on only while it pays, see WantsFreeHook; the weak map
//                   prunes in the drain instead, see PruneDead)
//   dump ─▶ snapshot ─▶ _id2ref (or map[key]) per object: dead ones forgotten, live ones measured
//                       (heap_dump.h)
//
// Why object ids. The VM frees objects without telling anyone reliably (a missed free hook would
// leave a dead object "live" forever), so liveness is asked of the VM at dump time instead. Since
// Ruby 2.7 an object id is a counter value assigned on first use, never reused and unchanged by
// compaction, so "is id N alive" has one right answer even after the object's slot is recycled.
// Asking for an id allocates inside the VM (a table entry, rarely a Bignum), which the NEWOBJ hook
// must not do; so the hook only queues the object, marked (and pinned) by this profiler until the
// postponed job or the next dump assigns its id.
//
// Threads: everything except the write phase of a dump runs with the GVL held, which is what
// serializes the hook, the drain and the dump's bookkeeping. The HeapRecorder is thread-safe on
// its own, so the write phase (GVL released) runs while other threads allocate and are recorded.
#pragma once

#include <pthread.h>
#include <ruby.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/heap_profile_encoder.h"
#include "core/heap_recorder.h"
#include "core/memory_resource.h"
#include "core/object_sampler.h"
#include "frame_registry.h"
#include "weak_map_liveness.h"

namespace heaprec::ruby {

// How a dump tells live objects from dead ones ("Ruby versions" in docs/design/ruby.md): by object
// id and ObjectSpace._id2ref (Ruby 3.0-3.4), or by an ObjectSpace::WeakMap (weak_map_liveness.h;
// the default where _id2ref is deprecated or gone).
enum class LivenessBackend { kObjectId, kWeakMap };

struct ProfilerOptions {
  std::uint64_t sample_every = 1000;  // 1 tracks every object
  std::uint64_t seed = 0;
  std::uint32_t max_depth = 400;  // at most kMaxRubyDepth
  LivenessBackend liveness = LivenessBackend::kObjectId;
};

// Where DrainPending runs: what a Ruby exception caught there can do.
enum class DrainFrom {
  kPostponedJob,  // nothing propagates from a postponed job: sent to the thread again
  kDump,          // a method the program called: raised again once the queue is drained
};

// The most Ruby frames a stack keeps: what a profile holds, less one for the truncation marker.
inline constexpr std::uint32_t kMaxRubyDepth = kMaxEncodedDepth - 1;

struct ProfilerStats {
  std::uint64_t sampled;    // objects chosen by the sampler and queued
  std::uint64_t skipped;    // sampled but dropped: pending list full or out of memory
  std::uint64_t pending;    // queued, waiting for an object id
  std::uint64_t freed;      // forgotten when the FREEOBJ hook saw them freed
  std::uint64_t truncated;  // sampled with a stack deeper than max_depth (cut, marked)
  std::uint64_t sample_ns;  // time in the NEWOBJ hook for sampled objects (stack capture, queue)
  std::uint64_t record_ns;  // time assigning ids and recording queued objects (DrainPending)
  // dumps that went on without the objects a drain suspended on another thread had still to
  // record (AwaitOtherDrain's bounds)
  std::uint64_t drains_not_awaited;
};

struct DumpJob;

// The classes of sampled objects, as the small indices the allocation history is keyed by (with the
// stack): an object's class is read when it is allocated (RBASIC_CLASS, in the NEWOBJ hook), but
// its name may be asked only in Ruby context, so the class is interned here and named by the dump.
// Every class is marked (so pinned: neither freed nor moved while heaprec runs, and an index keeps
// naming the class it was given for), like the frames. One entry per distinct class sampled.
// GVL held for every call; Intern calls malloc, never Ruby.
class ClassRegistry {
 public:
  static constexpr std::uint32_t kNoClass = UINT32_MAX;
  std::uint32_t Intern(VALUE klass);
  VALUE At(std::uint32_t index) const { return classes_[index]; }
  void Mark() const;
  std::size_t size() const { return classes_.size(); }

 private:
  std::unordered_map<VALUE, std::uint32_t> index_;
  std::vector<VALUE> classes_;
  VALUE last_class_ = 0;  // the last class interned, and its index
  std::uint32_t last_index_ = 0;
};

class HeapProfiler {
 public:
  explicit HeapProfiler(const ProfilerOptions& options);
  ~HeapProfiler();
  HeapProfiler(const HeapProfiler&) = delete;
  HeapProfiler& operator=(const HeapProfiler&) = delete;

  // The NEWOBJ hook's work. GVL held; allocates no Ruby object.
  void OnNewObject(VALUE object);

  // The FREEOBJ hook's work (GC sweep): forgets a tracked object the VM is freeing, so dead objects
  // do not pile up between dumps. Only a hint: a free it misses (or that happens while the hook is
  // off) is found by the next dump's liveness pass (which is the source of truth), at the cost of a
  // failed _id2ref there.
  void OnFreeObject(VALUE object);

  // The calling thread's Ruby frames, encoded as stacks hold them, into `out` (at most `capacity`,
  // the last of them the truncation marker when the stack is deeper): for a native byte sample
  // (native_bytes.h). Returns how many; 0 when there are none or the registry is out of memory.
  // GVL held, not during GC; allocates no Ruby object. Not reentrant (its own buffers): callers
  // never nest, since the preload library samples nothing while one runs.
  std::uint32_t EncodeStackForNativeSample(std::uint64_t* out, std::uint32_t capacity);

  // Gives the queued objects their keys (an object id, or a weak map entry) and records them. GVL
  // held; may allocate Ruby objects and, with the weak map, call Ruby methods, inside which other
  // threads may run. Returns at once when a drain is already under way on this thread (a user's
  // TracePoint inside it that dumps) or, from a postponed job, on another; a dump waits for another
  // thread's drain to end (so it sees every object sampled before it).
  void DrainPending(DrainFrom from);

  // Whether the FREEOBJ hook pays for itself now: always at dense sampling (sample_every at most
  // kFreeHookEvery), otherwise only while the recorder holds kFreeHookAbove objects or more, until
  // a dump's liveness pass leaves fewer than half that. See "FREEOBJ only where it pays" in
  // docs/design/ruby.md. SyncFreeHook() applies it.
  // Never with the weak map: its keys are not the VM's, and its lookups of the dead are cheap, so
  // a periodic prune (PruneDead) does the hook's work.
  bool WantsFreeHook() const {
    return weak_map_ == nullptr && (options_.sample_every <= kFreeHookEvery || many_tracked_);
  }
  // Counts the tracked objects again (after a dump's liveness pass) and updates WantsFreeHook.
  void RecountTracked();
  static constexpr std::uint64_t kFreeHookEvery = 100;
  static constexpr std::uint64_t kFreeHookAbove = 1 << 15;

  // Whether Heaprec.stop must leave the deletion to the one using the profiler: a dump, or a drain
  // (whose Ruby calls may run a user's TracePoint that stops heaprec).
  bool busy() const { return active_dump != nullptr || draining_; }

  // The weak map backend, or null with object ids.
  const WeakMapLiveness* weak_map() const { return weak_map_.get(); }

  // GC mark function: frames and queued objects.
  void Mark() const;

  // fork() handlers (pthread_atfork): the child inherits tracked objects, which are alive there,
  // and starts an allocation history of its own (at its first drain, see DrainPending).
  void BeforeFork();
  void AfterForkInParent();
  void AfterForkInChild();

  HeapRecorder& recorder() { return recorder_; }
  FrameRegistry& frames() { return frames_; }
  const ClassRegistry& classes() const { return classes_; }
  MemoryResource& memory() { return memory_; }
  const ProfilerOptions& options() const { return options_; }
  double weight() const { return sampler_.weight(); }
  ProfilerStats Stats() const;
  std::int64_t start_time_ns() const { return start_time_ns_; }

  // The dump in progress, if any (at most one at a time; set and cleared with the GVL held).
  DumpJob* active_dump = nullptr;
  // Heaprec.stop during a dump: the dump's cleanup destroys the profiler instead.
  bool stop_requested = false;

 private:
  void SampleObject(VALUE object);  // OnNewObject's work for a sampled object

  // The recorder key of the pending object at `index`; false when it could not be given one (the
  // weak map's insertion was interrupted twice). `raised` keeps what interrupted it.
  bool KeyFor(std::size_t index, std::uint64_t* key, RaisedIntoUs* raised);

  // With the weak map, forgets the tracked objects the VM has collected, once the tracked set has
  // doubled since the last time (so each record pays for O(1) lookups): what the FREEOBJ hint does
  // for object ids, between dumps.
  void PruneDead(RaisedIntoUs* raised);
  static constexpr std::uint64_t kPruneAbove = 4096;
  // How many times the stall bound a dump waits for a moving drain at most (AwaitOtherDrain).
  static constexpr std::uint64_t kDrainWaitsInAll = 12;

  // Encodes `captured` frames from rb_profile_frames (`frames`, `lines`) into `out`: at most
  // `limit`, then the truncation marker when there were more. Returns how many were written, or
  // kEncodeFailed when the registry ran out of memory.
  std::uint32_t EncodeRubyFrames(const VALUE* frames, const int* lines, int captured,
                                 std::uint32_t limit, std::uint64_t* out);
  static constexpr std::uint32_t kEncodeFailed = UINT32_MAX;

  struct PendingObject {
    VALUE object;
    std::uint32_t first_frame;  // index into pending_frames_
    std::uint32_t depth;
    std::uint64_t alloc_time_ns;
    std::uint32_t generation;  // rb_gc_count() at allocation
    VALUE klass;               // RBASIC_CLASS at allocation (marked while queued)
  };
  // Waits, the GVL released, for a drain suspended on another thread to finish; false once it
  // has made no progress for WeakMapTesting::drain_wait_seconds, or has taken kDrainWaitsInAll
  // times that in all.
  bool AwaitOtherDrain();
  // Clears the allocation history a forked child inherited (see history_from_parent_).
  void ForgetParentHistory();
  // A bound for a queue the postponed job never drains; one C call allocating millions of objects
  // in exact mode fills it (4M objects), beyond which samples are skipped and counted.
  static constexpr std::size_t kMaxPending = 1 << 22;

  const ProfilerOptions options_;
  SystemMemoryResource memory_;
  HeapRecorder recorder_;
  FrameRegistry frames_;
  ClassRegistry classes_;
  ObjectSampler sampler_;
  std::vector<VALUE> frame_buffer_;
  std::vector<int> line_buffer_;
  // EncodeStackForNativeSample's own, so that it never depends on what SampleObject is doing.
  std::vector<VALUE> native_frame_buffer_;
  std::vector<int> native_line_buffer_;
  std::unique_ptr<WeakMapLiveness> weak_map_;  // with LivenessBackend::kWeakMap
  std::uint64_t prune_at_ = kPruneAbove;       // tracked objects that start the next PruneDead
  bool draining_ = false;
  pthread_t drain_owner_{};         // the thread running the drain, while draining_
  std::size_t drain_position_ = 0;  // the pending entry it is at (those before it are recorded)
  // Each object a drain records or, pruning, looks up: what a dump waiting for it watches.
  std::uint64_t drain_progress_ = 0;
  std::vector<PendingObject> pending_;
  std::vector<std::uint64_t> pending_frames_;
  std::uint64_t sampled_ = 0;
  std::uint64_t skipped_ = 0;
  std::uint64_t freed_ = 0;
  std::uint64_t truncated_ = 0;
  std::uint64_t sample_ns_ = 0;
  std::uint64_t record_ns_ = 0;
  std::uint64_t drains_not_awaited_ = 0;
  std::uint64_t recorded_since_count_ = 0;  // records since the last RecountTracked
  bool many_tracked_ = false;               // kFreeHookAbove reached, not yet halved by a dump
  std::int64_t start_time_ns_;
  // In a forked child until its first drain: the allocation history is still the parent's, and the
  // first parent_pending_ queued objects were allocated by the parent.
  bool history_from_parent_ = false;
  std::size_t parent_pending_ = 0;
};

// While set on a thread, the hook ignores that thread's allocations: the profiler's own Ruby
// objects (names, exceptions from _id2ref) are not the program's. Other threads keep being sampled.
// Returns the previous setting. Code that may be unwound by a Ruby exception restores it in an
// rb_ensure handler (a C++ destructor would be skipped).
bool SuppressHookOnThisThread(bool suppressed);
bool HookSuppressedOnThisThread();

// Enables or disables the FREEOBJ hook as the running profiler wants it (extension.cc).
void SyncFreeHook();

std::uint64_t RealtimeNanoseconds();
std::uint64_t MonotonicNanoseconds();

}  // namespace heaprec::ruby
