#include "heap_profiler.h"

#include <pthread.h>
#include <ruby/debug.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "core/heap_snapshot.h"
#include "heap_dump.h"

namespace heaprec::ruby {
namespace {

thread_local bool t_hook_suppressed = false;

void DrainPendingJob(void*);

// Objects a Ruby program can hold: not the VM's internal ones (instruction sequences, method
// entries, hidden strings and arrays with no class), which ObjectSpace does not show either.
bool IsProgramObject(VALUE object) {
  if (RBASIC_CLASS(object) == 0) return false;
  switch (RB_BUILTIN_TYPE(object)) {
    case T_NONE:
    case T_IMEMO:
    case T_NODE:
    case T_ICLASS:
    case T_ZOMBIE:
    case T_MOVED:
      return false;
    default:
      return true;
  }
}

// Whether a frame from rb_profile_frames is a method written in C: it has no instruction sequence,
// so no path (rb_profile_frame_path reads the frame; it allocates nothing).
bool IsCMethod(VALUE frame) { return NIL_P(rb_profile_frame_path(frame)); }

// Whether a stack's root-most frame is the VM's placeholder for the main program: the empty
// top-level instruction sequence the VM pushes when it starts (Init_VM), labelled <main>, named
// after the script, at line 0. rb_profile_frames reports it below the script's own <main>, so every
// stack of the main thread started with <main> twice; Ruby's backtraces leave it out, and so does
// heaprec. (The label is the sequence's own string: reading it allocates nothing.)
bool IsVmTopFrame(VALUE frame, int line) {
  if (line != 0 || IsCMethod(frame)) return false;
  VALUE label = rb_profile_frame_label(frame);
  return RB_TYPE_P(label, T_STRING) && RSTRING_LEN(label) == 6 &&
         std::memcmp(RSTRING_PTR(label), "<main>", 6) == 0;
}

}  // namespace

namespace {
std::uint64_t ClockNanoseconds(clockid_t clock) {
  timespec now;
  clock_gettime(clock, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(now.tv_nsec);
}
}  // namespace

std::uint64_t RealtimeNanoseconds() { return ClockNanoseconds(CLOCK_REALTIME); }
std::uint64_t MonotonicNanoseconds() { return ClockNanoseconds(CLOCK_MONOTONIC); }

bool HookSuppressedOnThisThread() { return t_hook_suppressed; }

bool SuppressHookOnThisThread(bool suppressed) {
  bool previous = t_hook_suppressed;
  t_hook_suppressed = suppressed;
  return previous;
}

HeapProfiler::HeapProfiler(const ProfilerOptions& options)
    : options_(options),
      // The allocation history (alloc_objects by stack and class) keeps every stack it counts.
      recorder_(memory_, RecorderOptions{.keep_allocation_history = true}),
      // One more than kept: a stack that fills it was cut.
      frame_buffer_(options.max_depth + 1),
      line_buffer_(options.max_depth + 1),
      native_frame_buffer_(options.max_depth + 1),
      native_line_buffer_(options.max_depth + 1),
      start_time_ns_(static_cast<std::int64_t>(RealtimeNanoseconds())) {
  sampler_.Configure(options.sample_every, options.seed);
  if (options.liveness == LivenessBackend::kWeakMap)
    weak_map_ = std::make_unique<WeakMapLiveness>();
  pending_.reserve(1024);
  pending_frames_.reserve(1024 * 16);
}

HeapProfiler::~HeapProfiler() = default;

void HeapProfiler::OnNewObject(VALUE object) {
  if (!sampler_.ShouldSample()) return;
  // Timed for Heaprec.stats (sample_ns): two clock reads per sampled object, none per other one.
  const std::uint64_t start = MonotonicNanoseconds();
  SampleObject(object);
  sample_ns_ += MonotonicNanoseconds() - start;
}

std::uint32_t HeapProfiler::EncodeRubyFrames(const VALUE* frames, const int* lines, int captured,
                                             std::uint32_t limit, std::uint64_t* out) {
  // A whole stack (not cut at the limit) ends at the VM's placeholder frame, on the main thread.
  if (captured > 0 && captured <= static_cast<int>(limit) &&
      IsVmTopFrame(frames[captured - 1], lines[captured - 1])) {
    --captured;
  }
  const int depth = std::min(captured, static_cast<int>(limit));
  for (int i = 0; i < depth; ++i) {
    VALUE caller = 0;
    int line = lines[i];
    if (line == 0 && IsCMethod(frames[i])) {
      // A C method takes the file and line of the nearest Ruby frame that called it.
      for (int j = i + 1; j < captured; ++j) {
        if (lines[j] > 0 && !IsCMethod(frames[j])) {
          caller = frames[j];
          line = lines[j];
          break;
        }
      }
    }
    std::uint32_t index = frames_.Intern(frames[i], caller);
    if (index == FrameRegistry::kNoFrame) return kEncodeFailed;
    out[i] = FrameRegistry::Encode(index, line);
  }
  if (captured <= depth) return static_cast<std::uint32_t>(depth);
  out[depth] = FrameRegistry::Encode(FrameRegistry::kTruncatedIndex, 0);
  return static_cast<std::uint32_t>(depth) + 1;
}

std::uint32_t HeapProfiler::EncodeStackForNativeSample(std::uint64_t* out, std::uint32_t capacity) {
  if (capacity < 2) return 0;
  const std::uint32_t limit = std::min(options_.max_depth, capacity - 1);
  const int captured =
      std::max(0, rb_profile_frames(0, static_cast<int>(limit) + 1, native_frame_buffer_.data(),
                                    native_line_buffer_.data()));
  std::uint32_t count = EncodeRubyFrames(native_frame_buffer_.data(), native_line_buffer_.data(),
                                         captured, limit, out);
  return count == kEncodeFailed ? 0 : count;
}

void HeapProfiler::SampleObject(VALUE object) {
  if (t_hook_suppressed || !IsProgramObject(object)) return;
  ++sampled_;
  if (pending_.size() >= kMaxPending) {  // the postponed job has not run for a long while
    ++skipped_;
    return;
  }
  // What this allocates (the lists below, the frame registry) is heaprec's: native byte samples
  // of it are not the program's (native_bytes.h).
  bool was_suppressed = SuppressHookOnThisThread(true);
  const int captured = std::max(0, rb_profile_frames(0, static_cast<int>(frame_buffer_.size()),
                                                     frame_buffer_.data(), line_buffer_.data()));
  const std::size_t first = pending_frames_.size();
  // Room for what was captured (at most max_depth + 1: the frames kept and the marker).
  // Growing these vectors uses malloc, never the Ruby heap, so it cannot start a GC.
  pending_frames_.resize(first + static_cast<std::size_t>(captured));
  std::uint32_t count = EncodeRubyFrames(frame_buffer_.data(), line_buffer_.data(), captured,
                                         options_.max_depth, pending_frames_.data() + first);
  SuppressHookOnThisThread(was_suppressed);
  if (count == kEncodeFailed) {
    pending_frames_.resize(first);
    ++skipped_;
    return;
  }
  pending_frames_.resize(first + count);
  if (static_cast<std::uint32_t>(captured) > options_.max_depth) ++truncated_;
  pending_.push_back({object, static_cast<std::uint32_t>(first),
                      static_cast<std::uint32_t>(pending_frames_.size() - first),
                      RealtimeNanoseconds(), static_cast<std::uint32_t>(rb_gc_count()),
                      RBASIC_CLASS(object)});
  if (pending_.size() == 1) rb_postponed_job_register_one(0, DrainPendingJob, nullptr);
}

void HeapProfiler::OnFreeObject(VALUE object) {
  // Only objects that were given an id can be tracked; for those rb_obj_id is a table lookup (the
  // FREEOBJ event comes before the VM drops the id), so nothing is allocated during the GC.
#ifdef FL_SEEN_OBJ_ID
  if ((RBASIC(object)->flags & RUBY_FL_SEEN_OBJ_ID) == 0) return;
#else
  // Rubies without the flag (4.0 keeps an object's id in its fields) use the weak map, whose
  // profiler never turns this hook on (WantsFreeHook).
  return;
#endif
  VALUE id = rb_obj_id(object);
  if (!RB_FIXNUM_P(id)) return;
  std::uint64_t key = static_cast<std::uint64_t>(FIX2LONG(id));
  if (recorder_.MaybeTracked(key) && recorder_.Forget(key)) ++freed_;
}

bool HeapProfiler::KeyFor(std::size_t index, std::uint64_t* key, RaisedIntoUs* raised) {
  VALUE object = pending_[index].object;
  if (weak_map_ == nullptr) {
    // A C function that checks no interrupts; it allocates (a table entry, rarely a Bignum).
    VALUE id = rb_obj_id(object);
    *key = RB_FIXNUM_P(id) ? static_cast<std::uint64_t>(FIX2LONG(id)) : NUM2ULL(id);
    return true;
  }
  *key = weak_map_->NextKey();
  // Once more if interrupted: what interrupted it may have come before the entry was made (a
  // TracePoint on the call) or after (the interrupt check as the method returns).
  return weak_map_->Insert(*key, object, raised) || weak_map_->Insert(*key, object, raised);
}

void HeapProfiler::DrainPending(DrainFrom from) {
  if (draining_) {
    // On this thread: a TracePoint on the weak map's methods dumping; the outer drain goes on. A
    // postponed job on another thread: the drain under way takes its objects too.
    if (pthread_equal(drain_owner_, pthread_self()) || from == DrainFrom::kPostponedJob) return;
    // A dump, while another thread's drain is suspended inside a weak map call (a thread switch
    // at its interrupt check): the dump must see every object sampled before it, so it lets that
    // drain finish, then drains what is left. Not forever: that thread may be blocked (a
    // program's TracePoint on the map's methods waiting for this one), and a dump, the exit's
    // included, must end. Past the bound the dump goes on without the objects still queued (they
    // are recorded when that drain resumes) and counts it.
    if (!AwaitOtherDrain()) {
      ++drains_not_awaited_;
      return;
    }
  }
  draining_ = true;
  drain_owner_ = pthread_self();
  const std::uint64_t start = MonotonicNanoseconds();
  bool was_suppressed = SuppressHookOnThisThread(true);
  RaisedIntoUs raised;
  // Index loop: GC may run inside rb_obj_id (it allocates table entries) and mark the list, so
  // the entries stay in place until all are recorded. With the weak map, other threads may run
  // inside its calls (the insertions, a prune) and queue more objects, whose postponed jobs leave
  // them to this drain: so an entry is copied after the call, and the drain goes on until the
  // queue is empty.
  do {
    std::size_t drained = 0;
    for (; drained < pending_.size(); ++drained) {
      drain_position_ = drained;
      ++drain_progress_;
      // A forked child's history counts its own allocations: the history it inherited is cleared
      // once the objects the parent queued before forking are recorded (live here too, but the
      // parent's allocations).
      if (history_from_parent_ && drained == parent_pending_) ForgetParentHistory();
      std::uint64_t key;
      if (!KeyFor(drained, &key, &raised)) {
        ++skipped_;
        continue;
      }
      const PendingObject p = pending_[drained];
      std::uint32_t klass = classes_.Intern(p.klass);
      if (klass == ClassRegistry::kNoClass) {
        ++skipped_;
        continue;
      }
      // The size is unknown (the object was empty when sampled): the history records none, and
      // dumps measure live objects.
      recorder_.Record(key, pending_frames_.data() + p.first_frame, p.depth, 0, sampler_.weight(),
                       p.alloc_time_ns, p.generation, klass);
    }
    recorded_since_count_ += drained;
    if (history_from_parent_) ForgetParentHistory();
    pending_.clear();
    pending_frames_.clear();
    // Only growth can turn the FREEOBJ hook on, or call for a prune; counting takes every shard's
    // lock, so not each time. A dump does its own full pass right after draining.
    if (recorded_since_count_ >= 1024 && from == DrainFrom::kPostponedJob) {
      if (weak_map_ != nullptr) {
        PruneDead(&raised);
      } else if (!many_tracked_) {
        RecountTracked();
      }
    }
  } while (!pending_.empty());
  SuppressHookOnThisThread(was_suppressed);
  record_ns_ += MonotonicNanoseconds() - start;
  draining_ = false;
  if (from == DrainFrom::kDump) {
    raised.Rethrow();
  } else {
    raised.Redeliver();
  }
}

bool HeapProfiler::AwaitOtherDrain() {
  // A drain that is moving is waited for: a slow one (GC.stress runs a GC in every map call, and
  // a loaded machine gives the thread little time) still has the objects the dump must count. One
  // that stops moving is not: its thread may never come back. The cap in all is for a drain kept
  // going by other threads' new objects.
  const std::uint64_t stalled_ns =
      static_cast<std::uint64_t>(g_weak_map_testing.drain_wait_seconds * 1e9);
  const std::uint64_t start = MonotonicNanoseconds();
  std::uint64_t progress = drain_progress_;
  std::uint64_t moved_at = start;
  while (draining_) {
    const std::uint64_t now = MonotonicNanoseconds();
    if (drain_progress_ != progress) {
      progress = drain_progress_;
      moved_at = now;
    }
    if (now - moved_at >= stalled_ns || now - start >= kDrainWaitsInAll * stalled_ns) return false;
    rb_thread_wait_for(timeval{0, 1000});
  }
  return true;
}

void HeapProfiler::PruneDead(RaisedIntoUs* raised) {
  recorded_since_count_ = 0;
  if (recorder_.Stats().live_objects < prune_at_) return;
  HeapSnapshot snapshot;
  if (snapshot.Take(recorder_, SnapshotGrouping::kEachObject)) {
    const HeapSnapshot::Object* objects = snapshot.objects();
    for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
      ++drain_progress_;
      VALUE found = weak_map_->Find(objects[i].key, raised);
      if (found == Qundef) break;  // interrupted: the rest waits for the next prune or dump
      if (NIL_P(found) && recorder_.Forget(objects[i].key)) ++freed_;
    }
    snapshot.Release();
  }
  prune_at_ = std::max(kPruneAbove, 2 * recorder_.Stats().live_objects);
}

void HeapProfiler::RecountTracked() {
  recorded_since_count_ = 0;
  const std::uint64_t tracked = recorder_.Stats().live_objects;
  const bool before = many_tracked_;
  if (tracked >= kFreeHookAbove) {
    many_tracked_ = true;
  } else if (tracked < kFreeHookAbove / 2) {
    many_tracked_ = false;
  }
  if (many_tracked_ != before) SyncFreeHook();
}

void HeapProfiler::ForgetParentHistory() {
  recorder_.ClearAllocationHistory();
  history_from_parent_ = false;
  parent_pending_ = 0;
}

void HeapProfiler::Mark() const {
  frames_.Mark();
  classes_.Mark();
  if (weak_map_ != nullptr) weak_map_->Mark();
  for (const PendingObject& p : pending_) {
    rb_gc_mark(p.object);
    rb_gc_mark(p.klass);  // the object may be hidden (its class cleared) before it is drained
  }
}

std::uint32_t ClassRegistry::Intern(VALUE klass) {
  if (klass == last_class_ && !classes_.empty()) return last_index_;  // runs of one class
  auto it = index_.find(klass);
  if (it != index_.end()) {
    last_class_ = klass;
    last_index_ = it->second;
    return it->second;
  }
  if (classes_.size() >= kNoClass) return kNoClass;
  std::uint32_t index = static_cast<std::uint32_t>(classes_.size());
  classes_.push_back(klass);
  index_.emplace(klass, index);
  last_class_ = klass;
  last_index_ = index;
  return index;
}

void ClassRegistry::Mark() const {
  for (VALUE klass : classes_) rb_gc_mark(klass);
}

ProfilerStats HeapProfiler::Stats() const {
  return {sampled_,   skipped_,   pending_.size(), freed_,
          truncated_, sample_ns_, record_ns_,      drains_not_awaited_};
}

void HeapProfiler::BeforeFork() { recorder_.LockForFork(); }
void HeapProfiler::AfterForkInParent() { recorder_.UnlockAfterForkInParent(); }
void HeapProfiler::AfterForkInChild() {
  recorder_.ResetAfterForkInChild();
  if (draining_ && !pthread_equal(drain_owner_, pthread_self())) {
    // Another thread of the parent was draining, suspended inside a weak map call (the only place
    // a drain lets another thread run). That thread does not exist here: what it recorded stays
    // recorded, and the rest is drained again by the child's next drain.
    pending_.erase(pending_.begin(),
                   pending_.begin() + static_cast<std::ptrdiff_t>(drain_position_));
    draining_ = false;
  }
  // Cleared at the next drain (not here: the objects the parent queued must be recorded first,
  // and this handler may not call into Ruby to assign their ids).
  history_from_parent_ = true;
  parent_pending_ = pending_.size();
}

extern HeapProfiler* g_profiler;

namespace {
void DrainPendingJob(void*) {
  HeapProfiler* profiler = g_profiler;
  if (profiler == nullptr) return;
  profiler->DrainPending(DrainFrom::kPostponedJob);
  // Heaprec.stop from inside the drain (a TracePoint on the weak map's methods) left it to us.
  if (profiler->stop_requested && !profiler->busy()) RetireStoppedProfiler(profiler);
}
}  // namespace

}  // namespace heaprec::ruby
