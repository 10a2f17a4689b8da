// HeapRecorder: the heart of heaprec. Records sampled objects with their stacks, forgets them when
// they die, and lets a serialization copy the live set while recording goes on.
//
//   Record(key, frames, size, weight) ─▶ stack_lock_: StackTable.Intern + AllocationHistory.Add
//                                     └▶ LiveTable.Insert (one shard lock)
//   Forget(key)                       ─▶ LiveTable.Remove (one shard lock) ─▶ stack_lock_: Unref
//   HeapSnapshot (heap_snapshot.h)    ─▶ pins the StackTable, copies the live set shard by shard
//
// Runtime-agnostic: a key is an opaque non-zero id (a block address, a runtime object id; 0 and
// UINT64_MAX are reserved) and a frame is an opaque 64-bit value (a program counter, a frame id).
//
// Thread safety: every method is thread-safe. Lock order: a LiveTable shard lock or stack_lock_
// (never both at once), then the MemoryResource's own lock. Nothing calls malloc or throws; no
// method is async-signal-safe except MaybeTracked(). Out of memory drops the sample and counts it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/allocation_history.h"
#include "core/live_table.h"
#include "core/memory_resource.h"
#include "core/mutex.h"
#include "core/stack_table.h"

namespace heaprec {

struct RecorderOptions {
  // Keep cumulative allocations per (stack, size) for alloc_objects / alloc_space. Costs one entry
  // per distinct (stack, size) ever sampled; a front end that only wants the live heap turns it
  // off.
  bool keep_allocation_history = true;
};

struct RecorderStats {
  std::uint64_t samples;    // Record() calls that were stored
  std::uint64_t forgotten;  // Forget() calls that found their key
  std::uint64_t replaced;   // keys recorded again while still live (a free was missed)
  std::uint64_t dropped;    // samples lost to exhausted profiler memory
  std::uint64_t live_objects;
  std::uint64_t stacks;
  std::uint64_t history_entries;
};

// What a front end keeps with an object recorded by handle (HeapRecorder::RecordWithHandle) so that
// forgetting it needs nothing else.
struct ObjectTicket {
  std::uint32_t handle;       // the live table's; 0 when the sample was dropped
  StackId stack;              // the stack whose reference the object holds
  std::int64_t contribution;  // what the object adds to LiveBytesEstimate()
};

class HeapRecorder {
 public:
  HeapRecorder(MemoryResource& memory, const RecorderOptions& options);
  HeapRecorder(const HeapRecorder&) = delete;
  HeapRecorder& operator=(const HeapRecorder&) = delete;

  // Records a sampled object. `frames` (leaf first) is copied; `generation` is the front end's own
  // (see LiveObject). May lock; no malloc.
  void Record(std::uint64_t key, const std::uint64_t* frames, std::uint32_t depth,
              std::uint64_t size, double weight, std::uint64_t alloc_time_ns,
              std::uint32_t generation = 0);

  // Lock-free, signal-safe: false proves `key` is not tracked (the free() fast path).
  bool MaybeTracked(std::uint64_t key) const { return live_.MayContain(key); }

  // Forgets a dead object; returns whether it was tracked. May lock; no malloc.
  bool Forget(std::uint64_t key);

  // For realloc, which must put the old block back if the reallocation fails: Detach removes the
  // key but hands its stack reference to the caller, who then calls exactly one of Reattach (the
  // block is still live) or ReleaseDetached (it is gone). May lock; no malloc.
  bool Detach(std::uint64_t key, LiveObject* detached);
  void Reattach(std::uint64_t key, const LiveObject& detached);
  void ReleaseDetached(const LiveObject& detached);

  // The same for a front end that keeps a few words with each object (the preload library, in a
  // sampled block's header): the object is found by the handle in the ObjectTicket that
  // RecordWithHandle returns, never looked up by key (LiveTable::InsertWithHandle), and
  // ForgetByTicket reads nothing of the recorder's but the ticket (the stack to release, what the
  // object added to the estimate): in exact mode the free of a large heap's block then costs no
  // cache miss of the recorder's. The front end vouches that it never records a key twice while
  // live and forgets each ticket once. The ticket's handle is 0 when the sample was dropped; a
  // ticket from before ForgetAll finds nothing. May lock; no malloc.
  ObjectTicket RecordWithHandle(std::uint64_t key, const std::uint64_t* frames, std::uint32_t depth,
                                std::uint64_t size, double weight, std::uint64_t alloc_time_ns);
  bool ForgetByTicket(const ObjectTicket& ticket, std::uint64_t key);
  // A hint before RecordWithHandle(key, ...), for a caller with other work to do first (walking
  // the stack): see LiveTable::PrefetchInsertWithHandle. Lock-free.
  void PrefetchRecordWithHandle(std::uint64_t key) const { live_.PrefetchInsertWithHandle(key); }
  // Detach for a handle's object (it reads the record: realloc needs the object).
  bool DetachByHandle(std::uint32_t handle, std::uint64_t key, LiveObject* detached);
  // Reattach for a detached handle's object: its new ticket (handle 0 when it was dropped).
  ObjectTicket ReattachWithHandle(std::uint64_t key, const LiveObject& detached);

  // Forgets every live object (a detach: nothing stays tracked). May lock; no malloc.
  void ForgetAll();

  RecorderStats Stats() const;
  MemoryResource& memory() const { return memory_; }

  // The estimated live bytes: the sum of weight × size over live objects, kept up to date by every
  // change to the live set. Lock-free; for peak detection.
  std::int64_t LiveBytesEstimate() const { return live_bytes_.load(std::memory_order_relaxed); }

  // Tells `observer` of every change to the live set and every stack node from now on, after
  // telling it of everything there is (see LiveSetObserver); null stops telling. The observer must
  // stay valid until it is replaced and no call is in flight (in practice: for the process's
  // life, or until a fork child, alone, replaces it). May lock; no malloc.
  void Observe(LiveSetObserver* observer);

  // fork(): the prepare handler takes every lock so the child never inherits one mid-update.
  void LockForFork();
  void UnlockAfterForkInParent();
  void ResetAfterForkInChild();

 private:
  friend class HeapSnapshot;

  MemoryResource& memory_;
  const RecorderOptions options_;
  mutable Mutex stack_lock_;  // guards stacks_ and history_
  StackTable stacks_;
  AllocationHistory history_;
  LiveTable live_;
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> forgotten_{0};
  std::atomic<std::uint64_t> replaced_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::int64_t> live_bytes_{0};

  // A forgotten object's end: counted, and its reference on `stack` dropped.
  void ReleaseStack(StackId stack);
  // Under stack_lock_: merges the history's pending adds (AllocationHistory::Merge), and drops a
  // reference on `stack`, which may free it, after merging.
  void MergeHistoryLocked();
  void UnrefLocked(StackId stack);
  // Interns the stack and counts the allocation in the history: the stack with one reference for
  // the object, or kInvalidStackId (counted as dropped) when out of memory.
  StackId InternForRecord(const std::uint64_t* frames, std::uint32_t depth, std::uint64_t size,
                          double weight);

  // What one live object adds to LiveBytesEstimate(); the same value is subtracted when it leaves.
  static std::int64_t Contribution(const LiveObject& o);
  // The ticket of an object inserted at `handle`, 0 for none.
  static ObjectTicket TicketFor(std::uint32_t handle, const LiveObject& o) {
    return {handle, handle != 0 ? o.stack : kInvalidStackId, handle != 0 ? Contribution(o) : 0};
  }
  void AddLive(const LiveObject& o) {
    live_bytes_.fetch_add(Contribution(o), std::memory_order_relaxed);
  }
  void SubtractLive(const LiveObject& o) {
    live_bytes_.fetch_sub(Contribution(o), std::memory_order_relaxed);
  }
};

}  // namespace heaprec
