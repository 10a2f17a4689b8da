#include "weak_map_liveness.h"

#include <ruby/debug.h>
#include <ruby/version.h>

#include "heap_profiler.h"

namespace heaprec::ruby {

WeakMapTesting g_weak_map_testing;

namespace {

// The VM's tags (vm_core.h, unchanged since Ruby 1.9; not in the public headers) for what
// rb_protect can return without an exception object: a throw, and a thread being killed.
constexpr int kTagThrow = 7;
constexpr int kTagFatal = 8;

// What a throw caught by rb_protect throws: the VM keeps it in an imemo_throw_data object (the
// thread's error), whose third word is the tag (struct vm_throw_data in Ruby 3.1's vm_core.h).
// Ruby 3.1's Timeout arrives this way: its Error is raised into the thread and, when raised there,
// throws itself to Timeout's catch. Qnil when `error` is not such an object. Read only on the
// Rubies that use object ids by default (up to 3.4): from 3.3 Timeout raises instead of throwing,
// and a layout not seen here is not read.
VALUE ThrownTag(VALUE error) {
#if RUBY_API_VERSION_MAJOR == 3 && RUBY_API_VERSION_MINOR <= 4
  constexpr VALUE kImemoThrowData = 3;  // enum imemo_type
  if (RB_SPECIAL_CONST_P(error) || !RB_TYPE_P(error, T_IMEMO)) return Qnil;
  if (((RBASIC(error)->flags >> RUBY_FL_USHIFT) & 0x0f) != kImemoThrowData) return Qnil;
  return reinterpret_cast<const VALUE*>(error)[2];
#else
  (void)error;
  return Qnil;
#endif
}

// Pending redeliveries, [thread, exception] pairs, one per thread started to send them.
// Registered with the GC at load time (WeakMapLiveness' constructor).
VALUE g_redeliveries = Qnil;

VALUE Send(VALUE entry) {
  return rb_funcall(rb_ary_entry(entry, 0), rb_intern("raise"), 1, rb_ary_entry(entry, 1));
}

// The sending thread's body. It is heaprec's own, so not sampled; and the flag is put back before
// it ends, since Ruby runs the program's next new thread on this native thread.
VALUE SendAgain(void*) {
  VALUE entry = rb_ary_shift(g_redeliveries);
  if (NIL_P(entry)) return Qnil;
  bool was_suppressed = SuppressHookOnThisThread(true);
  int state = 0;
  rb_protect(Send, entry, &state);
  SuppressHookOnThisThread(was_suppressed);
  if (state != 0) rb_jump_tag(state);  // killed at exit, say: the thread ends as it was told
  return Qnil;
}

VALUE StartSender(VALUE) { return rb_thread_create(SendAgain, nullptr); }

// The TracePoints that go on with a kill caught in this thread (ContinueKill), kept from the GC.
VALUE g_kill_continuations = Qnil;

// A thread killed inside the postponed job was already marked as dying (to_kill), so a second
// Thread#kill would be ignored: the kill goes on instead, by the same jump, from the thread's next
// Ruby event (no C call or return: those could be another extension's postponed job, which would
// swallow it again). A thread blocked in C then dies when the call returns.
void ContinueKill(VALUE trace_point, void*) {
  rb_tracepoint_disable(trace_point);
  rb_ary_delete(g_kill_continuations, trace_point);
  rb_jump_tag(kTagFatal);
}

VALUE StartKillContinuation(VALUE) {
  constexpr rb_event_flag_t kRubyEvents = RUBY_EVENT_LINE | RUBY_EVENT_CALL | RUBY_EVENT_RETURN |
                                          RUBY_EVENT_B_CALL | RUBY_EVENT_B_RETURN;
  VALUE trace_point = rb_tracepoint_new(rb_thread_current(), kRubyEvents, ContinueKill, nullptr);
  rb_ary_push(g_kill_continuations, trace_point);
  return rb_tracepoint_enable(trace_point);
}

struct MapCall {
  VALUE map;
  ID method;
  int argc;
  VALUE argv[2];
};

VALUE CallMap(VALUE argument) {
  const MapCall& call = *reinterpret_cast<const MapCall*>(argument);
  if (call.argc == 2 && !NIL_P(g_weak_map_testing.insertion_hook)) {
    VALUE hook = g_weak_map_testing.insertion_hook;
    g_weak_map_testing.insertion_hook = Qnil;
    rb_funcall(hook, rb_intern("call"), 0);
  }
  return rb_funcallv(call.map, call.method, call.argc, call.argv);
}

}  // namespace

void RaisedIntoUs::Catch(int state) {
  if (state == 0) return;
  if (state_ == 0) {
    state_ = state;
    error_ = rb_errinfo();
  }
  rb_set_errinfo(Qnil);
}

void RaisedIntoUs::Rethrow() {
  if (state_ == 0) return;
  int state = state_;
  state_ = 0;
  rb_set_errinfo(error_);
  error_ = Qnil;
  rb_jump_tag(state);
}

void RaisedIntoUs::Redeliver() {
  if (state_ == 0) return;
  const bool killed = state_ == kTagFatal;
  VALUE error = state_ == kTagThrow ? ThrownTag(error_) : error_;
  state_ = 0;
  error_ = Qnil;
  // Raised again in this thread, an exception that threw itself throws itself again (Timeout); a
  // throw of anything else cannot be sent, and is dropped.
  int state = 0;
  if (killed) {
    rb_protect(StartKillContinuation, Qnil, &state);
  } else if (rb_obj_is_kind_of(error, rb_eException)) {
    rb_ary_push(g_redeliveries, rb_assoc_new(rb_thread_current(), error));
    rb_protect(StartSender, Qnil, &state);
    if (state != 0) rb_ary_pop(g_redeliveries);
  }
  // Neither can fail but for lack of memory, or as the VM ends, when this thread is going anyway.
  if (state != 0) rb_set_errinfo(Qnil);
}

WeakMapLiveness::WeakMapLiveness() {
  if (NIL_P(g_redeliveries)) {
    rb_gc_register_address(&g_redeliveries);  // first: registering may start a GC
    g_redeliveries = rb_ary_new();
    rb_gc_register_address(&g_kill_continuations);
    g_kill_continuations = rb_ary_new();
  }
  VALUE object_space = rb_const_get(rb_cObject, rb_intern("ObjectSpace"));
  map_ = rb_class_new_instance(0, nullptr, rb_const_get(object_space, rb_intern("WeakMap")));
}

bool WeakMapLiveness::Insert(std::uint64_t key, VALUE object, RaisedIntoUs* raised) const {
  MapCall call{map_, rb_intern("[]="), 2, {ULL2NUM(key), object}};
  int state = 0;
  rb_protect(CallMap, reinterpret_cast<VALUE>(&call), &state);
  raised->Catch(state);
  return state == 0;
}

VALUE WeakMapLiveness::Find(std::uint64_t key, RaisedIntoUs* raised) const {
  MapCall call{map_, rb_intern("[]"), 1, {ULL2NUM(key), Qnil}};
  int state = 0;
  VALUE found = rb_protect(CallMap, reinterpret_cast<VALUE>(&call), &state);
  raised->Catch(state);
  return state == 0 ? found : Qundef;
}

}  // namespace heaprec::ruby
