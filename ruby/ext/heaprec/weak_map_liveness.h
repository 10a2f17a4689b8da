// The second liveness backend (issue 28, item 5): ObjectSpace::WeakMap, for the Rubies that have
// no ObjectSpace._id2ref (deprecated in 4.0, removed in 4.1; see "Ruby versions" in
// docs/design/ruby.md).
//
// Each sampled object gets its key from a counter (never reused, so a key names one object for
// good, as an object id does) and one entry in a WeakMap, key -> object. The map holds its values
// weakly: once the object is collected, looking its key up gives nil, and compaction moves the
// value with the object. Asking the object for nothing (no object id) leaves it as the program made
// it.
//
// Inserting and looking up are Ruby method calls, and every method call the VM makes from C checks
// interrupts when it returns. From the postponed job that drains the pending queue, that check can
// switch threads and deliver a Thread#raise, Thread#kill or Timeout aimed at the program, or run a
// user's TracePoint that raises: the postponed-job runner would swallow any of them. So every call
// is protected, and what it caught is handed back (RaisedIntoUs): re-raised where the caller can
// propagate it (a dump), otherwise sent on to the program (RaisedIntoUs::Redeliver).
#pragma once

#include <ruby.h>

#include <cstdint>

namespace heaprec::ruby {

// What a protected call caught: an exception, a kill, or nothing (state 0).
class RaisedIntoUs {
 public:
  // After rb_protect returned `state`: keeps the first thing caught (later ones are the same
  // interrupt's consequences) and clears the thread's error.
  void Catch(int state);
  bool caught() const { return state_ != 0; }
  // Where Ruby can propagate it (a method the program called): raises it again.
  void Rethrow();
  // Where it cannot (the postponed job): an exception is raised into this thread again from a new
  // thread, as the Thread#raise it most likely was (Ruby 3.1's Timeout arrives as a throw whose tag
  // is that exception); a kill goes on at the thread's next Ruby event. Any other throw cannot be
  // sent, and is dropped.
  void Redeliver();

 private:
  int state_ = 0;
  VALUE error_ = Qnil;  // kept from the GC by the machine stack: instances are locals
};

class WeakMapLiveness {
 public:
  // Creates the map: Ruby context (Heaprec.start).
  WeakMapLiveness();

  // The key of the next sampled object: 1, 2, ... (0 is reserved by the recorder).
  std::uint64_t NextKey() { return ++last_key_; }

  // map[key] = object. Returns false if a call was interrupted (what interrupted it is in
  // `raised`); the entry may then be missing.
  bool Insert(std::uint64_t key, VALUE object, RaisedIntoUs* raised) const;

  // The object of `key`, or Qnil once it was collected (or was never inserted). Qundef when the
  // call was interrupted (see `raised`).
  VALUE Find(std::uint64_t key, RaisedIntoUs* raised) const;

  void Mark() const { rb_gc_mark(map_); }

 private:
  VALUE map_;
  std::uint64_t last_key_ = 0;
};

// Test-only fault injection (Heaprec::Testing.during_next_insertion): a block called once inside
// the next protected insertion, before the map is called, to be what interrupts it (an exception, a
// kill, a throw, Heaprec.stop or a dump).
struct WeakMapTesting {
  VALUE insertion_hook = Qnil;  // registered with the GC by the extension
  // How long a dump waits for a drain suspended on another thread (HeapProfiler::AwaitOtherDrain):
  // far longer than a thread switch (Ruby's time slice is 100 ms), short enough that an exit is
  // not held up for long. Heaprec::Testing.drain_wait_seconds= shortens it.
  double drain_wait_seconds = 5;
};
extern WeakMapTesting g_weak_map_testing;

}  // namespace heaprec::ruby
