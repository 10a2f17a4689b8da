// heaprec_ext: the Ruby bindings. The public API (keyword arguments, defaults, validation) is in
// lib/heaprec.rb; these are its primitives.
//
//   Heaprec._start(sample_every, seed, max_depth, weak_map)   Heaprec.stop   Heaprec.running?
//   Heaprec.dump(path)   Heaprec._dump(path, reason)   Heaprec.stats
//   Heaprec._expand_output_template(pattern, sequence)   Heaprec._peak_path(final_path)
//   Heaprec::Testing: write_delay=, during_next_liveness_pass { }, during_next_insertion { },
//                     drain_wait_seconds= (fault injection for tests),
//                     empty_event_hooks(newobj, freeobj)   (the benchmark's floor)
#include <pthread.h>
#include <ruby.h>
#include <ruby/debug.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <vector>

#include "control_signal.h"
#include "core/manifest_writer.h"
#include "core/profile_file.h"
#include "heap_dump.h"
#include "heap_profiler.h"
#include "native_bytes.h"
#include "schema/profile_schema.h"

namespace heaprec::ruby {

HeapProfiler* g_profiler = nullptr;  // the running profiler, if any
// Profilers stopped while a dump was still using them (one per such dump); each is deleted by its
// dump's cleanup. Kept marked until then.
std::vector<HeapProfiler*> g_retired_profilers;

namespace {

// The event hooks. rb_add_event_hook2 with RUBY_EVENT_HOOK_FLAG_RAW_ARG calls a hook with its data
// and the event's rb_trace_arg_t, which holds the object: no TracePoint object, no type check of
// it, no lookup of the current trace argument (see "The event hooks" in docs/design/ruby.md). The
// VM runs hooks on internal events (NEWOBJ, FREEOBJ) unprotected, whatever
// RUBY_EVENT_HOOK_FLAG_SAFE says, so the flag is left out.
using RawEventHook = void (*)(VALUE data, rb_trace_arg_t* arg);

// Ruby's API takes every hook as rb_event_hook_func_t and calls a RAW_ARG one with its own
// signature; the cast goes through void (*)(), the type-erased function pointer.
rb_event_hook_func_t AsHookFunc(RawEventHook hook) {
  return reinterpret_cast<rb_event_hook_func_t>(reinterpret_cast<void (*)()>(hook));
}
void AddEventHook(RawEventHook hook, rb_event_flag_t events) {
  rb_add_event_hook2(AsHookFunc(hook), events, Qnil, RUBY_EVENT_HOOK_FLAG_RAW_ARG);
}
void RemoveEventHook(RawEventHook hook) { rb_remove_event_hook_with_data(AsHookFunc(hook), Qnil); }

void OnNewObjectEvent(VALUE, rb_trace_arg_t* arg) {
  if (g_profiler == nullptr) return;
  g_profiler->OnNewObject(rb_tracearg_object(arg));
}

void OnFreeObjectEvent(VALUE, rb_trace_arg_t* arg) {
  if (g_profiler == nullptr) return;
  g_profiler->OnFreeObject(rb_tracearg_object(arg));
}

bool g_free_hook_enabled = false;  // FREEOBJ: early forgetting, only while it pays (WantsFreeHook)

void SetFreeHook(bool enabled) {
  if (enabled == g_free_hook_enabled) return;
  if (enabled) {
    AddEventHook(OnFreeObjectEvent, RUBY_INTERNAL_EVENT_FREEOBJ);
  } else {
    RemoveEventHook(OnFreeObjectEvent);
  }
  g_free_hook_enabled = enabled;
}

// Heaprec::Testing.empty_event_hooks(newobj, freeobj): for bench/ruby_overhead.py only, the floor
// of any object-event profiler: hooks that do nothing, on NEWOBJ and (if freeobj) FREEOBJ, for the
// rest of the process. Not to be combined with Heaprec.start.
void EmptyEventHook(VALUE, rb_trace_arg_t*) {}

VALUE AddEmptyEventHooks(VALUE, VALUE newobj, VALUE freeobj) {
  if (RTEST(newobj)) AddEventHook(EmptyEventHook, RUBY_INTERNAL_EVENT_NEWOBJ);
  if (RTEST(freeobj)) AddEventHook(EmptyEventHook, RUBY_INTERNAL_EVENT_FREEOBJ);
  return Qnil;
}

// One long-lived object whose mark function marks what the profilers hold.
void MarkProfilers(void*) {
  if (g_profiler != nullptr) g_profiler->Mark();
  for (HeapProfiler* p : g_retired_profilers) p->Mark();
}
const rb_data_type_t kRootType = {
    "heaprec_root", {MarkProfilers, nullptr, nullptr, nullptr, {nullptr}}, nullptr, nullptr, 0};

void BeforeFork() {
  if (g_profiler != nullptr) g_profiler->BeforeFork();
  for (HeapProfiler* p : g_retired_profilers) p->BeforeFork();
}
void AfterForkInParent() {
  if (g_profiler != nullptr) g_profiler->AfterForkInParent();
  for (HeapProfiler* p : g_retired_profilers) p->AfterForkInParent();
}
// Only the forking thread exists in the child. A dump that thread was running (fork from a trap
// handler inside it) goes on there; a dump of another thread is abandoned, and so is a retired
// profiler whose dump belonged to another thread.
void AfterForkInChild() {
  if (g_profiler != nullptr) {
    g_profiler->AfterForkInChild();
    AbandonDumpInChild(*g_profiler);
  }
  std::vector<HeapProfiler*> kept;
  for (HeapProfiler* p : g_retired_profilers) {
    p->AfterForkInChild();
    if (AbandonDumpInChild(*p)) {
      delete p;
    } else {
      kept.push_back(p);
    }
  }
  g_retired_profilers.swap(kept);
}

HeapProfiler& Running() {
  if (g_profiler == nullptr) rb_raise(rb_eRuntimeError, "heaprec: not started (Heaprec.start)");
  return *g_profiler;
}

VALUE Start(VALUE, VALUE sample_every, VALUE seed, VALUE max_depth, VALUE weak_map) {
  if (g_profiler != nullptr) rb_raise(rb_eRuntimeError, "heaprec: already started");
  ProfilerOptions options;
  options.sample_every = NUM2ULL(sample_every);
  options.seed = NUM2ULL(seed);
  options.max_depth = NUM2UINT(max_depth);
  options.liveness = RTEST(weak_map) ? LivenessBackend::kWeakMap : LivenessBackend::kObjectId;
  if (options.sample_every == 0) rb_raise(rb_eArgError, "heaprec: sample_every must be >= 1");
  if (options.max_depth == 0 || options.max_depth > 10000) {
    rb_raise(rb_eArgError, "heaprec: max_depth must be between 1 and 10000");
  }
  if (options.max_depth > kMaxRubyDepth) {
    rb_warn(
        "heaprec: max_depth %u is more than a profile keeps; using %u (deeper stacks end in a "
        "truncation marker)",
        options.max_depth, kMaxRubyDepth);
    options.max_depth = kMaxRubyDepth;
  }
  // With the weak map, the constructor makes it (a Ruby object), and from there to this assignment
  // nothing allocates from the Ruby heap: no GC can miss it before Mark() reaches it.
  g_profiler = new HeapProfiler(options);
  AttachNativeBytes(g_profiler);  // before the hook: its probes are not the program's objects
  AddEventHook(OnNewObjectEvent, RUBY_INTERNAL_EVENT_NEWOBJ);
  SyncFreeHook();
  return Qtrue;
}

VALUE Stop(VALUE) {
  if (g_profiler == nullptr) return Qfalse;
  RemoveEventHook(OnNewObjectEvent);
  SetFreeHook(false);
  DetachNativeBytes();
  HeapProfiler* profiler = g_profiler;
  g_profiler = nullptr;
  if (profiler->busy()) {  // a dump or a drain is using it: let it finish
    profiler->stop_requested = true;
    g_retired_profilers.push_back(profiler);
  } else {
    delete profiler;
  }
  return Qtrue;
}

VALUE IsRunning(VALUE) { return g_profiler != nullptr ? Qtrue : Qfalse; }

// Heaprec._live_bytes: the VM's live slots in bytes, plus the estimated live native bytes when
// they are sampled (native_bytes.h): what autorun's peak watch compares.
VALUE g_live_slots_key = Qnil;  // :heap_live_slots, made at load time (a symbol made later would be
                                // an object the program is charged for)
VALUE LiveBytes(VALUE) {
  const auto slots =
      static_cast<std::int64_t>(rb_gc_stat(g_live_slots_key));  // a count, not a VALUE
  return LL2NUM(slots * static_cast<std::int64_t>(SlotSize()) + NativeLiveBytes());
}

// Heaprec._quietly { }: the block's allocations on this thread are heaprec's own (autorun's
// threads: a new thread's VM stack is allocated by the thread that creates it), not sampled. The
// only way to set the flag from Ruby, and it is always restored: the flag belongs to the native
// thread, and Ruby 3.1 runs a new Ruby thread on the native thread of one that ended, which would
// otherwise inherit it (the program's next thread, unsampled).
VALUE Quietly(VALUE) {
  bool was = SuppressHookOnThisThread(true);
  return rb_ensure(
      rb_yield, Qnil,
      [](VALUE was_suppressed) -> VALUE {
        SuppressHookOnThisThread(RTEST(was_suppressed));
        return Qnil;
      },
      was ? Qtrue : Qfalse);
}

// At the end of the program (an end proc, after autorun's at_exit has written the final profile):
// the native byte sampler lets go of the VM, which is torn down next; a malloc sampled during the
// teardown must not read Ruby's frames.
void DetachNativeBytesAtEnd(VALUE) { DetachNativeBytes(); }

// The path is converted first: its to_str/to_path is Ruby code, which may stop the profiler.
VALUE DumpWithReason(VALUE path, const char* reason) {
  VALUE file_path = rb_get_path(path);
  StringValueCStr(file_path);  // a NUL inside the path raises ArgumentError
  return DumpProfile(Running(), file_path, reason);
}

// Heaprec.dump: the program asked for this profile, which native profiles call reason=api.
VALUE Dump(VALUE, VALUE path) { return DumpWithReason(path, schema::kReasonApi); }

// Heaprec._dump: autorun's dumps, named as the native profiler names the same occasions (the
// manifest gets the same word): at exit, exit! (_exit) and a terminating signal, on its interval
// and its dump signal, for an HTTP request, when a ractor stops profiling (detach: profiling
// ended, the process goes on), and at a new peak (autorun.rb's peak thread).
VALUE DumpFor(VALUE, VALUE path, VALUE reason) {
  static const char* const kReasons[] = {schema::kReasonExit,       schema::kReasonUnderscoreExit,
                                         schema::kReasonTerminated, schema::kReasonInterval,
                                         schema::kReasonSignal,     schema::kReasonDetach,
                                         schema::kReasonHttp,       schema::kReasonApi,
                                         schema::kReasonPeak};
  const char* name = StringValueCStr(reason);
  for (const char* known : kReasons) {
    if (strcmp(name, known) == 0) return DumpWithReason(path, known);
  }
  rb_raise(rb_eArgError, "heaprec: unknown dump reason %s", name);
}

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
  set("freed", stats.freed);
  set("truncated", stats.truncated);
  set("sample_ns", stats.sample_ns);
  set("record_ns", stats.record_ns);
  set("drains_not_awaited", stats.drains_not_awaited);
  set("free_hook", g_free_hook_enabled ? 1 : 0);
  rb_hash_aset(hash, ID2SYM(rb_intern("liveness")),
               ID2SYM(rb_intern(profiler.weak_map() != nullptr ? "weak_map" : "object_id")));
  set("tracked", recorder.live_objects);
  set("forgotten", recorder.forgotten);
  set("stacks", recorder.stacks);
  set("allocation_sites", recorder.history_entries);  // (stack, class) pairs of alloc_objects
  set("frames", profiler.frames().size());
  set("profiler_bytes", profiler.memory().BytesInUse());
  NativeByteStats native = GetNativeByteStats();
  set("native_byte_interval", NativeByteInterval(&profiler));  // 0: native bytes not sampled
  set("native_with_ruby_stack", native.with_ruby_stack);
  set("native_only", native.native_only);
  set("native_cut_by_fallback", native.cut_by_fallback);
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

// NAME.pb.gz -> NAME.peak.pb.gz, the native profiler's name for the same file.
VALUE PeakPath(VALUE, VALUE final_path) {
  char out[4096];
  if (!InsertBeforeExtension(StringValueCStr(final_path), schema::kPeakInfix, out, sizeof(out))) {
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

VALUE DuringNextLivenessPass(VALUE) {
  g_dump_testing.liveness_pass_hook = rb_block_proc();
  return Qnil;
}

VALUE SetDrainWait(VALUE, VALUE seconds) {
  g_weak_map_testing.drain_wait_seconds = NUM2DBL(seconds);
  return seconds;
}

VALUE DuringNextInsertion(VALUE) {
  g_weak_map_testing.insertion_hook = rb_block_proc();
  return Qnil;
}

}  // namespace

void SyncFreeHook() { SetFreeHook(g_profiler != nullptr && g_profiler->WantsFreeHook()); }

void RetireStoppedProfiler(HeapProfiler* profiler) {
  auto it = std::find(g_retired_profilers.begin(), g_retired_profilers.end(), profiler);
  if (it != g_retired_profilers.end()) g_retired_profilers.erase(it);
  delete profiler;
}

}  // namespace heaprec::ruby

extern "C" __attribute__((visibility("default"))) void Init_heaprec_ext() {
  using namespace heaprec::ruby;
  VALUE module = rb_define_module("Heaprec");
  // The version compiled in (from the VERSION file, by CMake or extconf.rb), the one every profile
  // names: the Ruby files and the extension cannot disagree about it.
  rb_define_const(module, "VERSION", rb_obj_freeze(rb_str_new_cstr(HEAPREC_VERSION)));
  // The data pointer must not be null: the GC calls a T_DATA object's mark function only when it
  // has one. (It is not used; the mark function reads the globals.)
  rb_gc_register_mark_object(TypedData_Wrap_Struct(0, &kRootType, &g_profiler));
  rb_gc_register_address(&g_dump_testing.liveness_pass_hook);
  rb_gc_register_address(&g_weak_map_testing.insertion_hook);
  pthread_atfork(BeforeFork, AfterForkInParent, AfterForkInChild);

  rb_define_singleton_method(module, "_start", Start, 4);
  rb_define_singleton_method(module, "stop", Stop, 0);
  rb_define_singleton_method(module, "running?", IsRunning, 0);
  g_live_slots_key = ID2SYM(rb_intern("heap_live_slots"));  // a static symbol: never collected
  rb_define_singleton_method(module, "_live_bytes", LiveBytes, 0);
  rb_define_singleton_method(module, "_quietly", Quietly, 0);
  rb_set_end_proc(DetachNativeBytesAtEnd, Qnil);
  rb_define_singleton_method(module, "dump", Dump, 1);
  rb_define_singleton_method(module, "_dump", DumpFor, 2);
  rb_define_singleton_method(module, "stats", Stats, 0);
  rb_define_singleton_method(module, "_expand_output_template", ExpandTemplate, 3);
  rb_define_singleton_method(module, "_append_to_manifest", AppendManifest, 3);
  rb_define_singleton_method(module, "_peak_path", PeakPath, 1);
  DefineControlSignal(module);

  VALUE testing = rb_define_module_under(module, "Testing");
  rb_define_singleton_method(testing, "write_delay=", SetWriteDelay, 1);
  rb_define_singleton_method(testing, "during_next_liveness_pass", DuringNextLivenessPass, 0);
  rb_define_singleton_method(testing, "during_next_insertion", DuringNextInsertion, 0);
  rb_define_singleton_method(testing, "drain_wait_seconds=", SetDrainWait, 1);
  rb_define_singleton_method(testing, "empty_event_hooks", AddEmptyEventHooks, 2);
}
