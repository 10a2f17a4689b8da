// heaprec_ext: the Ruby bindings. The public API (keyword arguments, defaults, validation) is in
// lib/heaprec.rb; these are its primitives.
//
//   Heaprec._start(sample_every, seed, max_depth)   Heaprec.stop   Heaprec.running?
//   Heaprec.dump(path)   Heaprec.stats   Heaprec._expand_output_template(pattern, sequence)
//   Heaprec::Testing: write_delay=, fail_during_liveness_pass!, min_sweep_threshold=  (for tests)
#include <pthread.h>
#include <ruby.h>
#include <ruby/debug.h>
#include <unistd.h>

#include <ctime>

#include "core/profile_output.h"
#include "heap_dump.h"
#include "heap_profiler.h"

namespace heaprec::ruby {

HeapProfiler* g_profiler = nullptr;          // the running profiler, if any
HeapProfiler* g_retired_profiler = nullptr;  // stopped while a dump still uses it

namespace {

VALUE g_tracepoint = Qnil;       // NEWOBJ: sampling
VALUE g_free_tracepoint = Qnil;  // FREEOBJ: early forgetting (see HeapProfiler::OnFreeObject)

void OnNewObjectEvent(VALUE tracepoint, void*) {
  if (g_profiler == nullptr) return;
  g_profiler->OnNewObject(rb_tracearg_object(rb_tracearg_from_tracepoint(tracepoint)));
}

void OnFreeObjectEvent(VALUE tracepoint, void*) {
  if (g_profiler == nullptr) return;
  g_profiler->OnFreeObject(rb_tracearg_object(rb_tracearg_from_tracepoint(tracepoint)));
}

// One long-lived object whose mark function marks what the profilers hold.
void MarkProfilers(void*) {
  if (g_profiler != nullptr) g_profiler->Mark();
  if (g_retired_profiler != nullptr) g_retired_profiler->Mark();
}
const rb_data_type_t kRootType = {
    "heaprec_root", {MarkProfilers, nullptr, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

void BeforeFork() {
  for (HeapProfiler* p : {g_profiler, g_retired_profiler}) {
    if (p != nullptr) p->BeforeFork();
  }
}
void AfterForkInParent() {
  for (HeapProfiler* p : {g_profiler, g_retired_profiler}) {
    if (p != nullptr) p->AfterForkInParent();
  }
}
void AfterForkInChild() {
  for (HeapProfiler* p : {g_profiler, g_retired_profiler}) {
    if (p == nullptr) continue;
    p->AfterForkInChild();
    AbandonDumpInChild(*p);
  }
  if (g_retired_profiler != nullptr) {
    delete g_retired_profiler;
    g_retired_profiler = nullptr;
  }
}

HeapProfiler& Running() {
  if (g_profiler == nullptr) rb_raise(rb_eRuntimeError, "heaprec: not started (Heaprec.start)");
  return *g_profiler;
}

VALUE Start(VALUE, VALUE sample_every, VALUE seed, VALUE max_depth) {
  if (g_profiler != nullptr) rb_raise(rb_eRuntimeError, "heaprec: already started");
  ProfilerOptions options;
  options.sample_every = NUM2ULL(sample_every);
  options.seed = NUM2ULL(seed);
  options.max_depth = NUM2UINT(max_depth);
  if (options.sample_every == 0) rb_raise(rb_eArgError, "heaprec: sample_every must be >= 1");
  if (options.max_depth == 0 || options.max_depth > 10000) {
    rb_raise(rb_eArgError, "heaprec: max_depth must be between 1 and 10000");
  }
  g_profiler = new HeapProfiler(options);
  if (NIL_P(g_tracepoint)) {
    g_tracepoint = rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_NEWOBJ, OnNewObjectEvent, nullptr);
  }
  rb_tracepoint_enable(g_tracepoint);
  if (options.sample_every <= HeapProfiler::kFreeHintMaxEvery) {
    if (NIL_P(g_free_tracepoint)) {
      g_free_tracepoint =
          rb_tracepoint_new(0, RUBY_INTERNAL_EVENT_FREEOBJ, OnFreeObjectEvent, nullptr);
    }
    rb_tracepoint_enable(g_free_tracepoint);
  }
  return Qtrue;
}

VALUE Stop(VALUE) {
  if (g_profiler == nullptr) return Qfalse;
  rb_tracepoint_disable(g_tracepoint);
  if (!NIL_P(g_free_tracepoint)) rb_tracepoint_disable(g_free_tracepoint);
  HeapProfiler* profiler = g_profiler;
  g_profiler = nullptr;
  if (profiler->active_dump != nullptr) {  // another thread is writing from it: let it finish
    profiler->stop_requested = true;
    g_retired_profiler = profiler;
  } else {
    delete profiler;
  }
  return Qtrue;
}

VALUE IsRunning(VALUE) { return g_profiler != nullptr ? Qtrue : Qfalse; }

VALUE Dump(VALUE, VALUE path) { return DumpProfile(Running(), path); }

VALUE Stats(VALUE) {
  HeapProfiler& profiler = Running();
  ProfilerStats stats = profiler.Stats();
  RecorderStats recorder = profiler.recorder().Stats();
  VALUE hash = rb_hash_new();
  auto set = [&](const char* key, std::uint64_t value) {
    rb_hash_aset(hash, ID2SYM(rb_intern(key)), ULL2NUM(value));
  };
  set("sample_every", profiler.options().sample_every);
  set("sampled", stats.sampled);
  set("skipped", stats.skipped + recorder.dropped);
  set("pending", stats.pending);
  set("sweeps", stats.sweeps);
  set("freed", stats.freed);
  set("tracked", recorder.live_objects);
  set("forgotten", recorder.forgotten);
  set("stacks", recorder.stacks);
  set("frames", profiler.frames().size());
  set("profiler_bytes", profiler.memory().BytesInUse());
  return hash;
}

VALUE ExpandTemplate(VALUE, VALUE pattern, VALUE sequence, VALUE program) {
  char out[4096];
  if (!ExpandOutputTemplate(StringValueCStr(pattern), getpid(), StringValueCStr(program),
                            static_cast<long long>(time(nullptr)), NUM2UINT(sequence), out,
                            sizeof(out))) {
    rb_raise(rb_eArgError, "heaprec: output path too long");
  }
  return rb_str_new_cstr(out);
}

VALUE AppendManifest(VALUE, VALUE manifest, VALUE reason, VALUE path) {
  AppendToManifest(StringValueCStr(manifest), getpid(), StringValueCStr(reason),
                   StringValueCStr(path));
  return Qnil;
}

VALUE SetWriteDelay(VALUE, VALUE seconds) {
  g_dump_testing.write_delay_seconds = NUM2DBL(seconds);
  return seconds;
}

// Applies to profilers started afterwards.
VALUE SetMinSweepThreshold(VALUE, VALUE objects) {
  HeapProfiler::min_sweep_threshold = NUM2ULL(objects);
  return objects;
}

VALUE FailDuringLivenessPass(VALUE) {
  g_dump_testing.fail_during_liveness_pass = true;
  return Qnil;
}

}  // namespace

void RetireStoppedProfiler(HeapProfiler* profiler) {
  if (g_retired_profiler == profiler) g_retired_profiler = nullptr;
  delete profiler;
}

}  // namespace heaprec::ruby

extern "C" __attribute__((visibility("default"))) void Init_heaprec_ext() {
  using namespace heaprec::ruby;
  VALUE module = rb_define_module("Heaprec");
  // The data pointer must not be null: the GC calls a T_DATA object's mark function only when it
  // has one. (It is not used; the mark function reads the globals.)
  rb_gc_register_mark_object(TypedData_Wrap_Struct(0, &kRootType, &g_profiler));
  rb_gc_register_address(&g_tracepoint);
  rb_gc_register_address(&g_free_tracepoint);
  pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild);

  rb_define_singleton_method(module, "_start", Start, 3);
  rb_define_singleton_method(module, "stop", Stop, 0);
  rb_define_singleton_method(module, "running?", IsRunning, 0);
  rb_define_singleton_method(module, "dump", Dump, 1);
  rb_define_singleton_method(module, "stats", Stats, 0);
  rb_define_singleton_method(module, "_expand_output_template", ExpandTemplate, 3);
  rb_define_singleton_method(module, "_append_to_manifest", AppendManifest, 3);

  VALUE testing = rb_define_module_under(module, "Testing");
  rb_define_singleton_method(testing, "write_delay=", SetWriteDelay, 1);
  rb_define_singleton_method(testing, "fail_during_liveness_pass!", FailDuringLivenessPass, 0);
  rb_define_singleton_method(testing, "min_sweep_threshold=", SetMinSweepThreshold, 1);
}
