// HeapRecorder: the heart of heaprec. Records sampled objects with their stacks, forgets them when
// they die, and lets a serialization copy the live set while recording goes on.
//
//   Record(key, frames, size, weight) ─▶ stack_lock_: StackTable.Intern + AllocationHistory.Merge
//                                     └▶ LiveTable.Insert (one shard lock)
//   RecordWithHandle(..., lane)       ─▶ the lane's shard lock, under which:
//                                        the lane's ThreadCache: its recent stacks, pending history
//                                        adds (stack_lock_ only for another stack, and to merge)
//                                     └▶ LiveTable.InsertWithHandleLocked
//   Forget(key)                       ─▶ LiveTable.Remove (one shard lock) ─▶ stack_lock_: Unref
//   HeapSnapshot (heap_snapshot.h)    ─▶ merges pending adds, pins the StackTable, copies the
//                                        live set shard by shard
//
// Runtime-agnostic: a key is an opaque non-zero id (a block address, a runtime object id; 0 and
// UINT64_MAX are reserved) and a frame is an opaque 64-bit value (a program counter, a frame id).
//
// Thread safety: every method is thread-safe. Lock order: a LiveTable shard lock (which also guards
// its lane's ThreadCache), then stack_lock_, then the MemoryResource's own lock. Nothing calls
// malloc or throws; no method is async-signal-safe except MaybeTracked(). Out of memory drops the
// sample and counts it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/allocation_history.h"
#include "core/live_table.h"
#include "core/memory_resource.h"
#include "core/mutex.h"
#include "core/recent_stacks.h"
#include "core/stack_table.h"

namespace heaprec {

struct RecorderOptions {
  // Keep cumulative allocations per (stack, size, history tag) for alloc_objects / alloc_space.
  // Costs one entry per distinct key ever sampled, and every stack ever sampled stays interned; a
  // front end that only wants the live heap turns it off.
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
  ~HeapRecorder();
  HeapRecorder(const HeapRecorder&) = delete;
  HeapRecorder& operator=(const HeapRecorder&) = delete;

  // Records a sampled object. `frames` (leaf first) is copied; `generation` is the front end's own
  // (see LiveObject); `history_tag` is part of the allocation history's key (AllocationTotals::tag:
  // the Ruby front end's class index), not kept with the live object. May lock; no malloc.
  void Record(std::uint64_t key, const std::uint64_t* frames, std::uint32_t depth,
              std::uint64_t size, double weight, std::uint64_t alloc_time_ns,
              std::uint32_t generation = 0, std::uint32_t history_tag = 0);

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
  // `lane` is the calling thread's number: it picks the live table's shard
  // (LiveTable::InsertWithHandle) and the ThreadCache, so that threads recording at once share no
  // lock and no cache line in the common case.
  ObjectTicket RecordWithHandle(std::uint64_t key, const std::uint64_t* frames, std::uint32_t depth,
                                std::uint64_t size, double weight, std::uint64_t alloc_time_ns,
                                std::uint32_t lane);
  bool ForgetByTicket(const ObjectTicket& ticket, std::uint64_t key);
  // A hint before RecordWithHandle(key, ...), for a caller with other work to do first (walking
  // the stack): see LiveTable::PrefetchInsertWithHandle. Lock-free.
  void PrefetchRecordWithHandle(std::uint32_t lane) const { live_.PrefetchInsertWithHandle(lane); }
  // Detach for a handle's object (it reads the record: realloc needs the object).
  bool DetachByHandle(std::uint32_t handle, std::uint64_t key, LiveObject* detached);
  // Reattach for a detached handle's object: its new ticket (handle 0 when it was dropped).
  ObjectTicket ReattachWithHandle(std::uint64_t key, const LiveObject& detached,
                                  std::uint32_t lane);

  // Forgets every live object (a detach: nothing stays tracked). May lock; no malloc.
  void ForgetAll();

  // Forgets the allocation history (pending adds included) and the allocated-bytes estimate, and
  // keeps the live objects: a forked child whose allocation profile is to count its own
  // allocations only. The stacks stay interned (live objects use them). May lock; no malloc.
  void ClearAllocationHistory();

  RecorderStats Stats() const;
  MemoryResource& memory() const { return memory_; }

  // The estimated live bytes: the sum of weight × size over live objects, kept up to date by every
  // change to the live set. Lock-free; for peak detection.
  std::int64_t LiveBytesEstimate() const { return live_bytes_.load(std::memory_order_relaxed); }
  // The estimated bytes allocated since recording began (every sample's weight × size, freed ones
  // too): for the allocation rate over time. Lock-free; a sum over the lanes.
  std::int64_t AllocatedBytesEstimate() const;

  // A sampled object of (`stack`, `size`) that was temporary (its thread freed it before allocating
  // anything else: the front end decides), counted in the history's entry through `lane`'s cache.
  // May lock; no malloc.
  void CountTemporary(StackId stack, std::uint64_t size, std::uint32_t lane);

  // Tells `observer` of every change to the live set and every stack node from now on, after
  // telling it of everything there is (see LiveSetObserver); null stops telling, and returns once
  // no call to the old observer is in flight (it may then be torn down). May lock; no malloc.
  void Observe(LiveSetObserver* observer);

  // fork(): the prepare handler takes every lock so the child never inherits one mid-update.
  void LockForFork();
  void UnlockAfterForkInParent();
  void ResetAfterForkInChild();

 private:
  friend class HeapSnapshot;

  // A lane's front to the stack table and the history, for RecordWithHandle with the history on:
  // the stacks it interned lately (stacks are never freed then, so an id stays valid), found
  // without stack_lock_, and its history adds, merged kPending at a time. Guarded by the lock of
  // the lane's shard of the live table, which a record takes anyway for its insert: one lock
  // instead of two; merges of every cache (a snapshot, Stats) take each shard's lock in turn.
  // Its few words are the recorder's (two cache lines each); its arrays come from the
  // MemoryResource at the lane's first use (35 KiB, mapped without being touched: a thread that
  // samples a few stacks touches the first pages).
  struct ThreadCacheSpace {
    static constexpr std::uint32_t kStacks = 64;    // python3 in exact mode: 98% found here
    static constexpr std::uint32_t kFrames = 4096;  // 32 KiB: 64 stacks of 64 frames
    static constexpr std::uint32_t kPending = 32;
    RecentStacks::Entry stacks[kStacks];
    AllocationTotals pending[kPending];
    std::uint64_t frames[kFrames];
  };
  struct alignas(64) ThreadCache {
    RecentStacks recent;  // over space->stacks and space->frames
    std::uint32_t pending_count = 0;
    ThreadCacheSpace* space = nullptr;
    // The bytes this cache's records stand for (AllocatedBytesEstimate): written under the lane's
    // lock, read without it.
    std::atomic<std::int64_t> allocated{0};
  };
  static constexpr std::size_t kThreadCaches = LiveTable::shard_count();  // a cache per shard
  // Stack ids are never recycled while the history is on (the only time caches are used): one
  // epoch for every entry of a lane's RecentStacks.
  static constexpr std::uint64_t kLaneEpoch = 1;

  MemoryResource& memory_;
  const RecorderOptions options_;
  // Whether each live object holds a reference on its stack. Not with the allocation history on:
  // the history references every stack it counts, for the process's life, so no stack with a live
  // object can be freed, and recording and forgetting an object touch no reference count (in exact
  // mode, threads allocating from one stack were contending for its count's cache line). A stack
  // whose history add is still pending (AllocationHistory::AddPending) has no reference yet, but
  // nothing frees a stack then: only an Unref does, and there are none.
  const bool objects_hold_stacks_;
  mutable Mutex stack_lock_;  // guards stacks_ and history_
  StackTable stacks_;
  AllocationHistory history_;
  LiveTable live_;
  ThreadCache caches_[kThreadCaches];
  // Samples and forgotten objects by key and through Detach; by handle, the live table counts
  // inserts and drops under its shard locks (no atomic operation of their own on the sampled
  // path), of which reattached_ are no new samples.
  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> forgotten_{0};
  std::atomic<std::uint64_t> reattached_{0};
  std::atomic<std::uint64_t> replaced_{0};
  std::atomic<std::uint64_t> dropped_{0};
  alignas(64) std::atomic<std::int64_t> live_bytes_{0};  // written by every thread
  std::atomic<std::int64_t> allocated_locked_{0};  // AllocatedBytesEstimate's share of stack_lock_

  // Drops a forgotten object's reference on `stack`, when objects hold them.
  void ReleaseStack(StackId stack);
  // Under stack_lock_: counts `count` allocations in the history (AllocationHistory::Merge).
  void MergeHistoryLocked(const AllocationTotals* adds, std::size_t count);
  // Merges every ThreadCache's pending adds. Takes each lane's shard lock, then stack_lock_.
  void MergeAllPending();
  // Under stack_lock_: drops an object's reference on `stack` when objects hold them.
  void UnrefObjectsStackLocked(StackId stack);
  // Interns the stack and counts the allocation in the history: the stack, with one reference for
  // the object when objects hold them, or kInvalidStackId (counted as dropped) when out of memory.
  StackId InternForRecord(const std::uint64_t* frames, std::uint32_t depth, std::uint64_t size,
                          double weight, std::uint32_t history_tag = 0);
  // Under live_.LaneMutex(lane): the lane's cache, its arrays made at its first use; null when
  // caches are not used or out of memory (the caller goes the stack lock's way then).
  ThreadCache* LaneCacheLocked(std::uint32_t lane);
  // Adds to `cache`'s pending history adds (merging them first when full). `cache` held.
  void AddPendingLocked(ThreadCache& cache, const AllocationTotals& add);
  // The same through `cache`, held by the caller.
  StackId InternThroughCache(ThreadCache& cache, const std::uint64_t* frames, std::uint32_t depth,
                             std::uint64_t size, double weight);

  // What one live object adds to LiveBytesEstimate(); the same value is subtracted when it leaves.
  static std::int64_t Contribution(const LiveObject& o);
  static std::int64_t Contribution(std::uint64_t size, double weight);
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
