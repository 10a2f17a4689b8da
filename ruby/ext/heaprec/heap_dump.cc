#include "heap_dump.h"

#include <pthread.h>
#include <ruby/thread.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/heap_profile_encoder.h"
#include "core/profile_file.h"
#include "heap_profiler.h"
#include "native_bytes.h"
#include "schema/profile_schema.h"
#include "schema/runtime_frames.h"

// Exported by libruby (ext/objspace uses the first) but not declared in its public headers.
extern "C" size_t rb_obj_memsize_of(VALUE);
extern "C" VALUE rb_class_real(VALUE);

namespace heaprec::ruby {

DumpTesting g_dump_testing;

namespace {

// The tag of the native blocks' entries (native_bytes.h): bytes only, of whichever objects own
// them, so their class label says what they are rather than whose.
constexpr std::uint64_t kNativeBlocksTag = UINT64_MAX;
constexpr char kNativeClassName[] = "(native memory)";

// The class of each sample, by index: a live object's tag holds (age in GCs << 32 | class index),
// an allocation history entry's the class index alone (age 0: a live object reported is at least
// 1 GC old, so an age of 0 means "no age", and no gc_age label). Native blocks
// (kNativeBlocksTag) count no objects and carry the interval they were sampled at instead.
class ClassLabeler final : public SampleLabeler {
 public:
  explicit ClassLabeler(std::uint64_t native_interval) : native_interval_(native_interval) {}
  std::uint32_t IndexOf(VALUE klass) {
    // The VM hides some objects after creating them (class pointer cleared: temporary buffers);
    // they have no class to name.
    if (klass == 0 || !RB_TYPE_P(klass, T_CLASS)) return FixedIndex("(hidden)", &hidden_);
    auto it = index_.find(klass);
    if (it != index_.end()) return it->second;
    // A class object lives at least as long as its instances, so the VALUE is a stable key for
    // the duration of this pass. rb_class_name gives "#<Class:0x...>" for anonymous classes.
    VALUE name = rb_class_name(klass);
    names_.emplace_back(RSTRING_PTR(name), static_cast<std::size_t>(RSTRING_LEN(name)));
    std::uint32_t index = static_cast<std::uint32_t>(names_.size() - 1);
    index_.emplace(klass, index);
    return index;
  }
  std::uint32_t UnknownIndex() { return FixedIndex("(unknown)", &unknown_); }

  std::size_t Labels(std::uint64_t tag, SampleLabel* out, std::size_t capacity) const override {
    if (capacity < 2) return 0;
    if (tag == kNativeBlocksTag) {
      out[0] = {schema::kClassLabel, kNativeClassName, 0, nullptr};
      out[1] = {schema::kByteIntervalLabel, nullptr, static_cast<std::int64_t>(native_interval_),
                schema::kBytesUnit};
      return 2;
    }
    out[0] = {schema::kClassLabel, names_[tag & 0xffffffffu].c_str(), 0, nullptr};
    const std::int64_t age = static_cast<std::int64_t>(tag >> 32);
    if (age == 0) return 1;
    out[1] = {schema::kGcAgeLabel, nullptr, age, schema::kGcCyclesUnit};
    return 2;
  }

  bool CountsObjects(std::uint64_t tag) const override { return tag != kNativeBlocksTag; }

 private:
  std::uint64_t native_interval_;
  std::unordered_map<VALUE, std::uint32_t> index_;
  std::vector<std::string> names_;
  std::uint32_t unknown_ = UINT32_MAX;
  std::uint32_t hidden_ = UINT32_MAX;

  std::uint32_t FixedIndex(const char* name, std::uint32_t* index) {
    if (*index == UINT32_MAX) {
      names_.emplace_back(name);
      *index = static_cast<std::uint32_t>(names_.size() - 1);
    }
    return *index;
  }
};

}  // namespace

// Everything one dump owns, on the heap: an exception unwinding the dump (Ruby uses longjmp) skips
// C++ destructors, so the rb_ensure cleanup deletes this instead.
struct DumpJob {
  DumpJob(HeapProfiler* dumped, std::string file, const char* why)
      : profiler(dumped),
        path(std::move(file)),
        reason(why),
        native_interval(NativeByteInterval(dumped)),
        classes(native_interval) {}

  HeapProfiler* profiler;
  std::string path;
  const char* reason;  // the reason= comment: a schema reason (extension.cc)
  // Whether this dump has native bytes (and their interval): decided once, as it starts, so that a
  // profiler stopped and another started while it runs Ruby code (the liveness pass) cannot mix
  // the two.
  std::uint64_t native_interval;
  HeapSnapshot snapshot;
  ClassLabeler classes;
  CodeMappings code;  // with native bytes: where their frames' addresses are, and their names
  const std::string drop_frames =
      std::string(schema::kRuntimeFrames) + '|' + schema::kNativeFrameNames;
  // The two comments (AddComments). The first names the process, so the write phase fills it in
  // (see WriteWithoutGvl): what follows its pid= field waits in header_rest.
  char header_comment[512] = "";
  std::string header_rest;
  std::string counters_comment;
  const char* comment_pointers[2] = {header_comment, ""};
  std::uint64_t taken_ns = 0;
  int error = 0;
  bool hook_was_suppressed = false;
  pthread_t owner = pthread_self();  // the thread running the dump (see AbandonDumpInChild)
};

namespace {

ID g_id2ref_method;
VALUE g_object_space_module = Qnil;  // a module constant: never collected or moved
void EnsureRubyNames();

VALUE CallId2Ref(VALUE id) { return rb_funcall(g_object_space_module, g_id2ref_method, 1, id); }

enum class Liveness { kAlive, kDead, kUncheckable };

// _id2ref raises RangeError for an id whose object is gone ("recycled object") and, with several
// ractors running, for one it may not hand out ("unshareable object on multi-ractor"): such an
// object is alive but cannot be measured from here, so it is kept with its last known size.
Liveness LookUp(std::uint64_t key, VALUE* object, int* state) {
  *state = 0;
  *object = rb_protect(CallId2Ref, ULL2NUM(key), state);
  if (*state == 0) return Liveness::kAlive;
  VALUE error = rb_errinfo();
  if (!rb_obj_is_kind_of(error, rb_eRangeError)) return Liveness::kDead;  // caller re-raises
  // Only _id2ref's own answers; any other RangeError was raised into this thread (Thread#raise,
  // Timeout) and must reach the caller.
  VALUE message = rb_attr_get(error, rb_intern("mesg"));
  if (!RB_TYPE_P(message, T_STRING)) return Liveness::kDead;  // not _id2ref's: caller re-raises
  std::string text(RSTRING_PTR(message), static_cast<std::size_t>(RSTRING_LEN(message)));
  bool dead = text.find("is recycled object") != std::string::npos ||
              text.find("is not id value") != std::string::npos;
  bool unshareable = text.find("unshareable object") != std::string::npos;
  if (!dead && !unshareable) return Liveness::kDead;  // caller re-raises (*state is still set)
  rb_set_errinfo(Qnil);
  *state = 0;
  return dead ? Liveness::kDead : Liveness::kUncheckable;
}

// Lets a garbage collection that is under way end before liveness is asked. While an incremental
// major GC marks, every object it has not reached yet looks alive to _id2ref (the VM calls an
// object garbage only once marking is over and the object is unmarked), and the GC count has
// already moved on, so a temporary allocated just before the GC began reads as having survived
// one: dumps taken then reported the last requests' garbage as live. rb_gc_disable() finishes the
// GC in progress, marking and sweeping (gc_rest), which the program would pay a moment later
// anyway; the GC is enabled again at once unless the program had disabled it. Afterwards an
// object of age >= 1 was marked by a finished GC, and one that died before is gone.
void FinishGcInProgress() {
  static const VALUE kState = ID2SYM(rb_intern("state"));
  static const VALUE kNone = ID2SYM(rb_intern("none"));
  if (rb_gc_latest_gc_info(kState) == kNone) return;
  if (!RTEST(rb_gc_disable())) rb_gc_enable();
}

// Asks the weak map (the second backend, weak_map_liveness.h) whether `key`'s object is alive.
// Anything raised into the lookup (an interrupt, a TracePoint) is raised again here, where the
// program's dump propagates it and its ensure cleans up.
Liveness LookUpInWeakMap(const WeakMapLiveness& weak_map, std::uint64_t key, VALUE* object) {
  RaisedIntoUs raised;
  *object = weak_map.Find(key, &raised);
  raised.Rethrow();
  return NIL_P(*object) ? Liveness::kDead : Liveness::kAlive;
}

void LivenessPass(DumpJob& job) {
  HeapSnapshot::Object* objects = job.snapshot.mutable_objects();
  std::size_t count = job.snapshot.object_count(), kept = 0;
  std::uint32_t gc_now = static_cast<std::uint32_t>(rb_gc_count());
  const WeakMapLiveness* weak_map = job.profiler->weak_map();
  for (std::size_t i = 0; i < count; ++i) {
    if (i == count / 2 && !NIL_P(g_dump_testing.liveness_pass_hook)) {
      VALUE hook = g_dump_testing.liveness_pass_hook;
      g_dump_testing.liveness_pass_hook = Qnil;
      rb_funcall(hook, rb_intern("call"), 0);
    }
    HeapSnapshot::Object o = objects[i];
    VALUE object;
    Liveness liveness;
    if (weak_map != nullptr) {
      liveness = LookUpInWeakMap(*weak_map, o.key, &object);
    } else {
      int state;
      liveness = LookUp(o.key, &object, &state);
      if (state != 0) rb_jump_tag(state);  // not a RangeError: an interrupt, say; ensure cleans up
    }
    if (liveness == Liveness::kDead) {
      job.profiler->recorder().Forget(o.key);
      continue;
    }
    // Age in GCs survived, from the GC count at allocation (unsigned: wraps consistently).
    std::uint32_t age = gc_now - o.generation;
    if (age == 0) continue;  // not yet survived a GC: still tracked, not yet reported
    std::uint32_t class_index;
    if (liveness == Liveness::kAlive) {
      // With native bytes the object's malloc'd parts are sampled where they were allocated: the
      // object itself is its slot (native_bytes.h: never counted twice).
      o.size = job.native_interval != 0 ? SlotSize() : rb_obj_memsize_of(object);
      class_index = job.classes.IndexOf(rb_obj_class(object));
    } else {
      class_index = job.classes.UnknownIndex();
    }
    o.tag = (static_cast<std::uint64_t>(age) << 32) | class_index;
    objects[kept++] = o;
  }
  job.snapshot.Truncate(kept);
}

// The allocation history's tags are ClassRegistry indexes: each becomes the dump's label index of
// that class, named as live objects' classes are (rb_obj_class skips singleton classes and
// iclasses, as rb_class_real does).
void LabelHistoryClasses(DumpJob& job) {
  AllocationTotals* history = job.snapshot.mutable_history();
  const ClassRegistry& classes = job.profiler->classes();
  std::unordered_map<std::uint32_t, std::uint32_t> labels;  // registry index -> label index
  for (std::size_t i = 0; i < job.snapshot.history_count(); ++i) {
    auto it = labels.find(history[i].tag);
    if (it == labels.end()) {
      std::uint32_t label = job.classes.IndexOf(rb_class_real(classes.At(history[i].tag)));
      it = labels.emplace(history[i].tag, label).first;
    }
    history[i].tag = it->second;
  }
}

// "NAME=VALUE", a comment field.
std::string Field(const char* name, std::uint64_t value) {
  return std::string(name) + "=" + std::to_string(value);
}

// Two comments, as native profiles have them: what the profile is (the tool, the process, why it
// was written, how it was sampled, the Ruby it ran on), then the counters. `heaprec leaks` makes
// one series per pid= (a parent and its forked workers apart) and leaves reason=peak out.
void AddComments(DumpJob& job) {
  VALUE description = rb_const_get(rb_cObject, rb_intern("RUBY_DESCRIPTION"));
  const ProfilerOptions& options = job.profiler->options();
  std::string native;
  if (job.native_interval != 0) {
    native = Field(schema::kSampleIntervalField, job.native_interval) + " ";
  }
  job.header_rest =
      std::string(schema::kReasonField) + "=" + job.reason + " " +
      Field(schema::kSampleEveryField, options.sample_every) + " " + native +
      schema::kLivenessField + "=" +
      (job.profiler->weak_map() != nullptr ? "weak_map" : "object_id") + " " +
      std::string(RSTRING_PTR(description), static_cast<std::size_t>(RSTRING_LEN(description)));
  ProfilerStats stats = job.profiler->Stats();
  RecorderStats recorder = job.profiler->recorder().Stats();  // after the liveness pass
  job.counters_comment = Field(schema::kSampledField, stats.sampled) + " " +
                         Field(schema::kSkippedField, stats.skipped + recorder.dropped) + " " +
                         Field(schema::kTrackedField, recorder.live_objects) + " " +
                         Field(schema::kStacksField, recorder.stacks) + " " +
                         Field(schema::kTruncatedStacksField, stats.truncated);
  job.comment_pointers[1] = job.counters_comment.c_str();
}

void* WriteWithoutGvl(void* argument) {
  DumpJob& job = *static_cast<DumpJob*>(argument);
  // The pid of the process that writes the profile, which owns the data in it. Read here, not when
  // the snapshot is taken: until the GVL is released the dumping thread may run a trap handler
  // (inside the liveness pass, or at rb_thread_call_without_gvl's own interrupt check) that
  // forks, and the child, where this thread lives on, finishes the dump as its own. From here on a
  // fork (by another thread) does not take the dump along (AbandonDumpInChild).
  snprintf(job.header_comment, sizeof(job.header_comment),
           "heaprec " HEAPREC_VERSION " ruby front end (%s) %s=%ld %s",
           job.native_interval == 0 ? "objects" : "objects, native bytes", schema::kPidField,
           static_cast<long>(getpid()), job.header_rest.c_str());
  if (g_dump_testing.write_delay_seconds > 0) {
    usleep(static_cast<useconds_t>(std::lround(g_dump_testing.write_delay_seconds * 1e6)));
  }
  job.snapshot.SortByStackAndSize();
  HeapProfiler& profiler = *job.profiler;
  ProfileMetadata metadata = {profiler.options().sample_every,
                              static_cast<std::int64_t>(job.taken_ns),
                              static_cast<std::int64_t>(job.taken_ns) - profiler.start_time_ns(),
                              job.code.mappings.data(),
                              job.code.mappings.size(),
                              job.comment_pointers,
                              2};
  metadata.period_type = schema::kPerObjectPeriodType;
  metadata.period_unit = schema::kCountUnit;
  // alloc_objects by stack and class; no alloc_space: an object's size is not known when it is
  // allocated (docs/design/ruby.md, "Allocation profiles").
  metadata.allocation_totals = true;
  metadata.allocation_sizes = false;
  metadata.frames = &profiler.frames();
  metadata.labeler = &job.classes;
  // Sites are Ruby frames: pprof drops every native frame (each has a name, CodeMappings), as
  // heaprec's reports skip them, and no native start-up frame is kept as the user's (only a
  // marker's samples have them: "(garbage collector)" is their site).
  metadata.names = &job.code;
  metadata.drop_frames = job.drop_frames.c_str();
  metadata.keep_frames = "";
  job.error = WriteHeapProfileFile(job.path.c_str(), job.snapshot, metadata, profiler.memory());
  return nullptr;
}

VALUE DumpBody(VALUE argument) {
  DumpJob& job = *reinterpret_cast<DumpJob*>(argument);
  job.hook_was_suppressed = SuppressHookOnThisThread(true);  // restored by the ensure handler
  job.profiler->DrainPending(DrainFrom::kDump);
  FinishGcInProgress();
  job.taken_ns = RealtimeNanoseconds();
  if (!job.snapshot.Take(job.profiler->recorder(), SnapshotGrouping::kEachObject)) {
    rb_raise(rb_eNoMemError, "heaprec: out of memory copying the live set");
  }
  LivenessPass(job);
  job.profiler->RecountTracked();  // the dead are gone: the FREEOBJ hook may no longer pay
  if (job.native_interval != 0) {
    if (!AddNativeBlocks(job.profiler, job.snapshot, kNativeBlocksTag, &job.code)) {
      rb_raise(rb_eNoMemError, "heaprec: out of memory copying the native blocks");
    }
  }
  LabelHistoryClasses(job);
  job.profiler->frames().ResolveNames();
  AddComments(job);
  rb_thread_call_without_gvl(WriteWithoutGvl, &job, nullptr, nullptr);
  if (job.error != 0) {
    rb_syserr_fail_str(job.error, rb_sprintf("heaprec: cannot write profile %s", job.path.c_str()));
  }
  return rb_str_new(job.path.data(), static_cast<long>(job.path.size()));
}

}  // namespace

namespace {
void EnsureRubyNames() {
  if (g_object_space_module == Qnil) {
    g_object_space_module = rb_const_get(rb_cObject, rb_intern("ObjectSpace"));
    g_id2ref_method = rb_intern("_id2ref");
  }
}
}  // namespace

VALUE DumpProfile(HeapProfiler& profiler, VALUE path, const char* reason) {
  EnsureRubyNames();
  if (profiler.active_dump != nullptr) {
    rb_raise(rb_eRuntimeError, "heaprec: a dump is already in progress in another thread");
  }
  StringValue(path);
  auto* job = new DumpJob(&profiler, std::string(RSTRING_PTR(path), RSTRING_LEN(path)), reason);
  profiler.active_dump = job;
  return rb_ensure(
      DumpBody, reinterpret_cast<VALUE>(job),
      [](VALUE argument) -> VALUE {
        auto* job = reinterpret_cast<DumpJob*>(argument);
        HeapProfiler* profiler = job->profiler;
        SuppressHookOnThisThread(job->hook_was_suppressed);
        job->snapshot.Release();
        profiler->active_dump = nullptr;
        delete job;
        // Not while a drain on this thread is still using it (a TracePoint inside the drain
        // dumped): the drain's job retires it.
        if (profiler->stop_requested && !profiler->busy()) RetireStoppedProfiler(profiler);
        return Qnil;
      },
      reinterpret_cast<VALUE>(job));
}

bool AbandonDumpInChild(HeapProfiler& profiler) {
  if (profiler.active_dump == nullptr) return false;
  // fork() from the dumping thread itself (a trap handler run inside the liveness pass): the
  // dump continues in the child, which is that thread.
  if (pthread_equal(profiler.active_dump->owner, pthread_self())) return false;
  // The dumping thread does not exist in the child; its job (and memory) is left behind, but the
  // pinned stacks must be released and the profiler made available again.
  profiler.active_dump->snapshot.Release();
  profiler.active_dump = nullptr;
  return true;
}

}  // namespace heaprec::ruby
