#include "preload/unwind/cfi_unwinder.h"

#include <cstring>

#include "core/prefault.h"
#include "preload/unwind/own_memory.h"

namespace heaprec::preload {

void FrameRuleCache::Init(Slot* slots, std::size_t capacity, RuleMemo* memos,
                          std::size_t memo_count) {
  mask_ = capacity - 1;
  slots_ = slots;
  memos_ = memos;
  memo_count_ = memos != nullptr ? memo_count : 0;
}

RuleMemo* FrameRuleCache::ClaimMemo(const void* thread_key) {
  if (memo_count_ == 0) return nullptr;
  auto key = reinterpret_cast<std::uintptr_t>(thread_key);
  RuleMemo& memo = memos_[((key >> 6) * 0x9e3779b97f4a7c15ull >> 40) % memo_count_];
  if (memo.busy.exchange(true, std::memory_order_acquire)) return nullptr;
  std::uint64_t generation = generation_.load(std::memory_order_relaxed);
  if (memo.generation != generation) {
    memo.count[0] = memo.count[1] = 0;
    memo.generation = generation;
  }
  return &memo;
}

// A sequence check in the style of a seqlock: a writer claims a slot by swapping its key for
// kWriting, stores the rule, then publishes the key; a reader accepts a rule only if the key it
// read before the rule is still there after it.
FrameRule FrameRuleCache::Find(std::uintptr_t pc) const {
  std::uint64_t key = KeyFor(pc);
  std::size_t i = SlotFor(pc);
  for (int probe = 0; probe < kProbes; ++probe, i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    std::uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == 0) break;
    if (seen != key) continue;
    std::uint64_t rule = slot.rule.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.key.load(std::memory_order_relaxed) == key) return FrameRule::FromWord(rule);
  }
  return FrameRule::FromWord(0);
}

void FrameRuleCache::Insert(std::uintptr_t pc, FrameRule rule) {
  if (pc >> 48 != 0) return;  // not a user-space address: cannot share a word with a generation
  // Rules land on every page of the cache by their hash, and one walk makes a dozen or more, which
  // fault in about half of its 32 pages: the first rule makes them all present (prefault.h).
  if (!prefaulted_.load(std::memory_order_relaxed) &&
      !prefaulted_.exchange(true, std::memory_order_relaxed)) {
    PrefaultForWrite(slots_, (mask_ + 1) * sizeof(Slot));
  }
  std::uint64_t key = KeyFor(pc), generation = key >> 48;
  std::size_t first = SlotFor(pc), target = first;
  for (int probe = 0; probe < kProbes; ++probe) {
    std::size_t i = (first + static_cast<std::size_t>(probe)) & mask_;
    std::uint64_t seen = slots_[i].key.load(std::memory_order_relaxed);
    if (seen == key) return;
    if (seen == 0 || (seen != kWriting && seen >> 48 != generation)) {
      target = i;  // empty, or left from before the last invalidation
      break;
    }
  }
  // When the window is full the first slot is replaced: the cache keeps the recent rules.
  Slot& slot = slots_[target];
  std::uint64_t expected = slot.key.load(std::memory_order_relaxed);
  if (expected == kWriting ||
      !slot.key.compare_exchange_strong(expected, kWriting, std::memory_order_relaxed)) {
    return;  // another thread is writing here; this rule will be computed again next time
  }
  std::atomic_thread_fence(std::memory_order_release);
  slot.rule.store(rule.word(), std::memory_order_relaxed);
  slot.key.store(key, std::memory_order_release);
}

void FrameRuleCache::Invalidate() {
  std::uint64_t next = (generation_.load(std::memory_order_relaxed) + 1) & 0xffff;
  // Generation 0 would make a key of pc 0 or 1 look empty or claimed.
  generation_.store(next == 0 ? 1 : next, std::memory_order_relaxed);
}

namespace {

constexpr std::uintptr_t kPage = 4096;
// How far above the window a read may extend it, checking every page in between (once per
// thread): frames are rarely larger. A word further up has its own pages checked, and the window
// moves there (the walk only goes up); at most kMaxStrayReads times per walk, so that a wrong rule
// cannot turn into thousands of system calls.
constexpr std::uintptr_t kMaxGrowth = 256 * kPage;
constexpr int kMaxStrayReads = 8;

// Whether the 8 bytes at `address` may be read, when they are not in the window yet.
__attribute__((noinline)) bool CanReadOutsideWindow(StackWindow* window, std::uintptr_t address,
                                                    int* stray_budget) {
  std::uintptr_t end = address + 8;
  while (address >= window->low && end > window->high && address < window->high + kMaxGrowth) {
    if (!IsReadable(window->high, 1)) return false;
    window->high += kPage;
  }
  if (address >= window->low && end <= window->high) return true;
  if (--*stray_budget < 0) return false;
  std::uintptr_t first = address & ~(kPage - 1), last = (end - 1) & ~(kPage - 1);
  if (!IsReadable(first, 1) || (last != first && !IsReadable(last, 1))) return false;
  if (address > window->high) *window = {first, last + kPage};
  return true;
}

// Whether the 8 bytes at `address` may be read.
inline bool CanRead(StackWindow* window, std::uintptr_t address, int* stray_budget) {
  if (address >= window->low && address + 8 <= window->high) return true;
  return CanReadOutsideWindow(window, address, stray_budget);
}

// The rule for `pc`: from the cache, computed and cached when missing. *cacheable is false for a
// pc outside every loaded object, whose rule must not be kept.
FrameRule CachedRule(FrameRuleCache* cache, std::uintptr_t pc, bool* cacheable) {
  *cacheable = true;
  FrameRule rule = cache->Find(pc);
  if (rule.kind() != FrameRule::Kind::kUnset) return rule;
  bool in_object;
  rule = ComputeFrameRule(pc, &in_object);
  *cacheable = in_object;
  if (in_object) cache->Insert(pc, rule);
  return rule;
}

// The registers a walk is at: the stack pointer, the pc whose rule steps the frame (a return
// address minus one), the frame pointer and whether it is known.
struct WalkState {
  std::uintptr_t sp, pc, fp;
  bool fp_known;
};

// Holds the calling thread's memo, if it can have it, for one walk: reads the rules of the last
// walk where this one meets it (RuleFor), replays the rest of the last walk where its words still
// hold (Replay), and keeps this walk's steps for the next. A walk that follows the last one step
// for step (a program allocating again from the same call path) writes nothing: the last walk
// stays the memo's. At the first step where it departs from it, the steps it followed so far are
// copied into the other half, where the walk goes on.
class MemoClaim {
 public:
  MemoClaim(FrameRuleCache* cache, const void* thread_key) : memo_(cache->ClaimMemo(thread_key)) {
    if (memo_ == nullptr) return;
    last_ = memo_->steps[memo_->last];
    last_end_ = last_ + memo_->count[memo_->last];
    next_ = next_begin_ = memo_->steps[memo_->last ^ 1];
    next_end_ = next_begin_ + RuleMemo::kSteps;
  }
  ~MemoClaim() {
    if (memo_ == nullptr) return;
    if (state_ == kDeparted) {
      memo_->last ^= 1;
      memo_->count[memo_->last] = static_cast<std::uint32_t>(next_ - next_begin_);
    }
    FrameRuleCache::ReleaseMemo(memo_);
  }
  MemoClaim(const MemoClaim&) = delete;
  MemoClaim& operator=(const MemoClaim&) = delete;

  // The rule for the step at `at` (steps come with rising sp). The last walk's steps below sp are
  // passed over for good: both walks only go up the stack. Afterwards CanReplay() says whether
  // the last walk had a step in the very same registers.
  FrameRule RuleFor(FrameRuleCache* cache, const WalkState& at) {
    same_registers_ = false;
    if (state_ == kFollowing) {  // the step must be the last walk's next one
      if (last_ != last_end_ && last_->sp == at.sp && last_->pc == at.pc) return Take(at);
      Depart(last_);
    }
    while (last_ != last_end_ && last_->sp < at.sp) ++last_;
    const bool met = last_ != last_end_ && last_->sp == at.sp && last_->pc == at.pc;
    if (state_ == kFirst) {
      if (met) {
        state_ = kFollowing;
        followed_ = last_;
        return Take(at);
      }
      Depart(last_);
    }
    if (met) {
      FrameRule rule = Take(at);
      Record(*(last_ - 1));
      return rule;
    }
    bool cacheable = true;
    FrameRule rule = CachedRule(cache, at.pc, &cacheable);
    // A rule that must not be kept is stored under sp 0, which no step has.
    Record({cacheable ? at.sp : 0, at.pc, at.fp,
            rule.word() | (at.fp_known ? RuleMemo::kFpKnown : 0)});
    return rule;
  }

  bool CanReplay() const { return same_registers_ && last_ != last_end_ && last_->sp != 0; }

  // From *at (where RuleFor met the last walk in the same registers, `rule` its rule): while the
  // words the last walk read at a step are still there, takes its next frame into out (at most
  // `room`), and moves *at and *rule to the next step. Returns the frames taken; *at and *rule are
  // then the step the walk goes on from, already kept.
  int Replay(WalkState* at, FrameRule* rule, void** out, int room, StackWindow* window,
             int* stray_budget) {
    const RuleMemo::Step* const first = last_;
    const RuleMemo::Step* step = first;  // the next step of the last walk
    const RuleMemo::Step* const end = last_end_ - first > room ? first + room : last_end_;
    FrameRule current = *rule;  // the rule of the step the walk is at
    for (; step != end && step->sp != 0; ++step) {
      // The return address the step read, then the frame pointer it restored, if it did. Both
      // lie between the step's stack pointer and its caller's (the walk checked that), so the
      // window's top is the one bound to check while the walk stays within it.
      const std::uintptr_t return_slot = step->sp - 8;
      const bool saved_fp = current.rbp() == FrameRule::FramePointer::kSaved;
      const std::uintptr_t fp_slot = step->sp + current.rbp_offset();
      if (step->sp > window->high && (!CanRead(window, return_slot, stray_budget) ||
                                      (saved_fp && !CanRead(window, fp_slot, stray_budget)))) {
        break;
      }
      if (Word(return_slot) != step->pc + 1 || (saved_fp && Word(fp_slot) != step->fp)) break;
      out[step - first] = reinterpret_cast<void*>(step->pc + 1);
      current = FrameRule::FromWord(step->rule & ~RuleMemo::kFpKnown);
    }
    const int taken = static_cast<int>(step - first);
    if (taken == 0) return 0;
    const RuleMemo::Step& at_step = *(step - 1);
    *at = {at_step.sp, at_step.pc, at_step.fp, (at_step.rule & RuleMemo::kFpKnown) != 0};
    *rule = current;
    last_ = step;
    if (state_ == kDeparted) {
      const std::size_t kept = static_cast<std::size_t>(next_end_ - next_);
      const std::size_t n = static_cast<std::size_t>(taken) < kept ? taken : kept;
      std::memcpy(next_, first, n * sizeof(RuleMemo::Step));
      next_ += n;
    }
    memo_->replayed += static_cast<std::uint64_t>(taken);
    return taken;
  }

 private:
  enum State { kFirst, kFollowing, kDeparted };

  static std::uintptr_t Word(std::uintptr_t address) {
    std::uintptr_t word;
    std::memcpy(&word, reinterpret_cast<const void*>(address), sizeof(word));
    return word;
  }

  // The met step's rule; notes whether its registers are the same.
  FrameRule Take(const WalkState& at) {
    const RuleMemo::Step& step = *last_++;
    const bool fp_known = (step.rule & RuleMemo::kFpKnown) != 0;
    same_registers_ = fp_known == at.fp_known && (!fp_known || step.fp == at.fp);
    return FrameRule::FromWord(step.rule & ~RuleMemo::kFpKnown);
  }

  void Record(const RuleMemo::Step& step) {
    if (next_ != next_end_) *next_++ = step;
  }

  // Copies the steps followed so far, [followed_, end), into the half this walk goes on in.
  void Depart(const RuleMemo::Step* end) {
    if (state_ == kFollowing) {
      for (const RuleMemo::Step* step = followed_; step != end; ++step) Record(*step);
    }
    state_ = kDeparted;
  }

  RuleMemo* memo_;
  const RuleMemo::Step* last_ = nullptr;
  const RuleMemo::Step* last_end_ = nullptr;
  const RuleMemo::Step* followed_ = nullptr;  // where this walk met the last one
  State state_ = kFirst;
  bool same_registers_ = false;
  RuleMemo::Step* next_ = nullptr;
  RuleMemo::Step* next_begin_ = nullptr;
  RuleMemo::Step* next_end_ = nullptr;  // null without a memo: nothing is written
};

}  // namespace

__attribute__((noinline)) int CfiBacktrace(void** out, int max, FrameRuleCache* cache,
                                           StackWindow* window, const WalkStart* start) {
  std::uintptr_t pc, sp, fp;
  // The registers at one instruction of this function, whose own rule then starts the walk.
  asm volatile(
      "lea 0(%%rip), %0\n\t"
      "mov %%rsp, %1\n\t"
      "mov %%rbp, %2"
      : "=r"(pc), "=r"(sp), "=r"(fp));
  const std::uintptr_t own_sp = sp;
  int n = 0;
  // The first pc is an instruction of this function; later ones are return addresses, whose
  // frames are described at the call instruction just before.
  std::uintptr_t lookup = pc;
  if (start != nullptr && max > 0 && start->sp > own_sp) {
    // From a frame further up: as if this function and those below `start` had been walked.
    sp = start->sp;
    fp = start->fp;
    out[n++] = reinterpret_cast<void*>(start->pc);
    lookup = start->pc - 1;
  }
  if (own_sp < window->low || own_sp >= window->high) {
    window->low = own_sp & ~(kPage - 1);  // this very page is mapped: the thread runs on it
    window->high = window->low + kPage;
  }
  int stray_budget = kMaxStrayReads;
  WalkState at = {sp, lookup, fp, true};
  MemoClaim memo(cache, window);
  while (n < max) {
    FrameRule rule = memo.RuleFor(cache, at);
    if (memo.CanReplay()) {
      n += memo.Replay(&at, &rule, out + n, max - n, window, &stray_budget);
      if (n == max) break;
    }
    if (rule.kind() == FrameRule::Kind::kEnd) break;
    if (rule.kind() != FrameRule::Kind::kStep) return -1;
    if (rule.cfa_from_rbp() && !at.fp_known) return -1;
    std::uintptr_t cfa = (rule.cfa_from_rbp() ? at.fp : at.sp) + rule.cfa_offset();
    // Each caller's frame lies above its callee's; anything else is a wrong rule or a corrupt
    // stack, and the walk stops there.
    if (cfa <= at.sp || (cfa & 7) != 0 || !CanRead(window, cfa - 8, &stray_budget)) break;
    std::uintptr_t return_address;
    std::memcpy(&return_address, reinterpret_cast<const void*>(cfa - 8), sizeof(return_address));
    switch (rule.rbp()) {
      case FrameRule::FramePointer::kUnchanged:
        break;
      case FrameRule::FramePointer::kUnknown:
        at.fp_known = false;
        break;
      case FrameRule::FramePointer::kSaved: {
        std::uintptr_t slot = cfa + rule.rbp_offset();
        if (slot < at.sp || slot + 8 > cfa || !CanRead(window, slot, &stray_budget)) return -1;
        std::memcpy(&at.fp, reinterpret_cast<const void*>(slot), sizeof(at.fp));
        at.fp_known = true;
        break;
      }
    }
    if (return_address == 0) break;
    out[n++] = reinterpret_cast<void*>(return_address);
    at.sp = cfa;
    at.pc = return_address - 1;
  }
  return n;
}

}  // namespace heaprec::preload
