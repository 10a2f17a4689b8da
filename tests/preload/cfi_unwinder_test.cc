// heaprec's CFI walker against libgcc's _Unwind_Backtrace, the reference: on the same stacks
// (frames of each kind compilers emit, libc's and the loader's own code calling back, other
// threads) both must report the same return addresses, first walk and cached walks alike; where the
// walker does not model a frame (signal trampolines, realigned frames) it must say so instead of
// reporting something. And the rule cache, hammered by threads, never returns another pc's rule.
#include "preload/unwind/cfi_unwinder.h"

#include <gtest/gtest.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unwind.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cfi_frames.h"

namespace heaprec::preload {
namespace {

using cfi_frames::Style;

constexpr int kMaxFrames = 512;

// A walker's cache and its thread's window. The cache is its own (with memos when asked) or one
// shared with other threads' walkers.
struct Walker {
  FrameRuleCache::Slot slots[1024] = {};
  RuleMemo memos[2] = {};
  FrameRuleCache own_cache;
  FrameRuleCache* cache = &own_cache;
  StackWindow window = {0, 0};
  explicit Walker(bool with_memos = false) {
    own_cache.Init(slots, 1024, with_memos ? memos : nullptr, 2);
  }
  explicit Walker(FrameRuleCache* shared) : Walker() { cache = shared; }
};

struct Walks {
  Walker* walker;
  std::vector<void*> cfi, libgcc;
  int cfi_result = 0;
};

_Unwind_Reason_Code CollectIp(_Unwind_Context* context, void* argument) {
  auto* frames = static_cast<std::vector<void*>*>(argument);
  _Unwind_Ptr ip = _Unwind_GetIP(context);
  if (ip == 0 || frames->size() == kMaxFrames) return _URC_END_OF_STACK;
  frames->push_back(reinterpret_cast<void*>(ip));
  return _URC_NO_REASON;
}

// The first libgcc frame is the return into LibgccWalk; the first CFI frame the return into
// WalkBoth, as is libgcc's second. From there on both lists are the callers of WalkBoth.
__attribute__((noinline)) void LibgccWalk(std::vector<void*>* frames) {
  _Unwind_Backtrace(CollectIp, frames);
  asm volatile("");  // not a tail call: this frame must exist
}

__attribute__((noinline)) void WalkBoth(void* context) {
  auto* walks = static_cast<Walks*>(context);
  void* frames[kMaxFrames];
  walks->cfi_result =
      CfiBacktrace(frames, kMaxFrames, walks->walker->cache, &walks->walker->window);
  if (walks->cfi_result > 0) walks->cfi.assign(frames + 1, frames + walks->cfi_result);
  LibgccWalk(&walks->libgcc);
  if (walks->libgcc.size() >= 2) {
    walks->libgcc.erase(walks->libgcc.begin(), walks->libgcc.begin() + 2);
  }
}

// Walks at the bottom of `depth` frames of `style`, twice (the second time from the cache), and
// checks both walks against libgcc's.
void ExpectSameAsLibgcc(Walker* walker, Style style, int depth) {
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "first walk" : "cached walk");
    Walks walks{walker, {}, {}};
    cfi_frames::Descend(style, depth, WalkBoth, &walks);
    ASSERT_GT(walks.cfi_result, 0);
    EXPECT_GT(walks.libgcc.size(), static_cast<std::size_t>(depth));
    EXPECT_EQ(walks.cfi, walks.libgcc);
  }
}

TEST(CfiUnwinderTest, SameFramesAsLibgccOnEachFrameKind) {
  Walker walker;
  for (Style style : {Style::kPlain, Style::kAlloca, Style::kLargeFrame, Style::kMixed}) {
    SCOPED_TRACE(static_cast<int>(style));
    for (int depth : {1, 5, 30, 100}) {
      SCOPED_TRACE(depth);
      // Keep the stack well within the main thread's 8 MiB.
      if ((style != Style::kPlain && depth > 30) || (style == Style::kLargeFrame && depth > 5)) {
        continue;
      }
      ExpectSameAsLibgcc(&walker, style, depth);
    }
  }
  // Frames larger than the window grows by: their reads are checked apart and move the window.
  for (int depth : {1, 3}) ExpectSameAsLibgcc(&walker, Style::kHugeFrame, depth);
}

struct StartedWalks {
  Walker* walker;
  std::vector<void*> from_caller, whole;
  int result = 0;
};

// A walk from this function's caller (as the preload's slow paths start theirs) must give what the
// whole walk gives from the return into that caller on: the same frames, none skipped or added.
__attribute__((noinline)) void WalkFromTheCaller(void* context) {
  auto* walks = static_cast<StartedWalks*>(context);
  const WalkStart caller = HEAPREC_CALLER_OF_THIS_FUNCTION();
  void* frames[kMaxFrames];
  walks->result =
      CfiBacktrace(frames, kMaxFrames, walks->walker->cache, &walks->walker->window, &caller);
  if (walks->result > 0) walks->from_caller.assign(frames, frames + walks->result);
  int whole = CfiBacktrace(frames, kMaxFrames, walks->walker->cache, &walks->walker->window);
  // frames[0] is the return into this function, frames[1] the return into its caller.
  if (whole > 1) walks->whole.assign(frames + 1, frames + whole);
  asm volatile("");  // not a tail call
}

TEST(CfiUnwinderTest, AWalkFromTheCallerIsTheWholeWalkWithoutTheFramesBelow) {
  Walker walker;
  // kAlloca's frames describe their CFA from rbp: the start's frame pointer must be the caller's.
  for (Style style : {Style::kPlain, Style::kAlloca, Style::kLargeFrame, Style::kMixed}) {
    for (int depth : {1, 5, 20}) {
      SCOPED_TRACE(testing::Message() << "style " << static_cast<int>(style) << " depth " << depth);
      if (style == Style::kLargeFrame && depth > 5) continue;
      StartedWalks walks{&walker, {}, {}};
      cfi_frames::Descend(style, depth, WalkFromTheCaller, &walks);
      ASSERT_GT(walks.result, depth);
      EXPECT_EQ(walks.from_caller, walks.whole);
    }
  }
  // A start that is not above the walker's own frame (not a caller of it) is ignored: the walk is
  // the whole one.
  void* ignored[kMaxFrames];
  void* whole[kMaxFrames];
  const WalkStart below = {1, 0, 0};
  int n = CfiBacktrace(ignored, kMaxFrames, walker.cache, &walker.window, &below);
  int m = CfiBacktrace(whole, kMaxFrames, walker.cache, &walker.window);
  ASSERT_GT(n, 1);
  ASSERT_EQ(n, m);
  EXPECT_EQ(std::vector<void*>(ignored + 1, ignored + n), std::vector<void*>(whole + 1, whole + m));
}

TEST(CfiUnwinderTest, SameFramesAsLibgccOnOtherThreads) {
  Walker walkers[4];
  std::vector<std::thread> threads;
  for (Walker& walker : walkers) {
    threads.emplace_back([&walker] {
      ExpectSameAsLibgcc(&walker, Style::kMixed, 20);
      ExpectSameAsLibgcc(&walker, Style::kPlain, 50);
    });
  }
  for (auto& thread : threads) thread.join();
}

// Walks that take their rules from the threads' memos (RuleMemo) are the same walks: four threads
// share one cache with two memos, so they contend for them and use each other's entries, at depths
// and styles that change from walk to walk (an entry meets other pcs at its step), and the rules
// are invalidated now and then.
TEST(CfiUnwinderTest, MemoizedRulesGiveTheSameWalks) {
  Walker owner(true);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&owner, t] {
      Walker walker(owner.cache);
      for (int round = 0; round < 30; ++round) {
        Style style = (round + t) % 3 == 0 ? Style::kAlloca : Style::kPlain;
        ExpectSameAsLibgcc(&walker, (round + t) % 2 == 0 ? Style::kMixed : style, 3 + round % 7);
        if (t == 0 && round % 10 == 4) owner.cache->Invalidate();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  // The memos are used: after a walk, the walking thread's memo holds the pcs it met.
  Walker last(owner.cache);
  ExpectSameAsLibgcc(&last, Style::kPlain, 5);
  RuleMemo* memo = owner.cache->ClaimMemo(&last.window);
  ASSERT_NE(memo, nullptr);
  int filled = 0;
  for (std::uint32_t i = 0; i < memo->count[memo->last]; ++i) {
    filled += memo->steps[memo->last][i].sp != 0;
  }
  FrameRuleCache::ReleaseMemo(memo);
  EXPECT_GT(filled, 5);
}

// Two walks from call paths of different depths that meet at the same frame: the second takes
// the rules of the frames from the meeting point up from the memo of the first, lined up by stack
// pointer (an interpreter's allocations differ near the allocation and share the frames above).
// Seen from the cache: emptied behind its back between the walks, it gets back only the rules of
// the frames below the meeting point.
__attribute__((noinline)) int MeetAndWalk(Walks* walks, int depth) {
  int result = cfi_frames::Descend(Style::kPlain, depth, WalkBoth, walks);
  asm volatile("");  // not a tail call: this frame is the meeting point
  return result;
}

TEST(CfiUnwinderTest, WalksOfOtherDepthsTakeTheSharedFramesRulesFromTheMemo) {
  Walker walker(true);
  Walks deep{&walker, {}, {}};
  MeetAndWalk(&deep, 12);
  ASSERT_GT(deep.cfi_result, 0);
  EXPECT_EQ(deep.cfi, deep.libgcc);
  for (FrameRuleCache::Slot& slot : walker.slots) slot.key.store(0);
  Walks shallow{&walker, {}, {}};
  MeetAndWalk(&shallow, 3);
  ASSERT_GT(shallow.cfi_result, 0);
  EXPECT_EQ(shallow.cfi, shallow.libgcc);
  int cached = 0;
  for (const FrameRuleCache::Slot& slot : walker.slots) cached += slot.key.load() != 0;
  // Below the meeting point: the walker's own frame, WalkBoth, Descend's frames (one return
  // address for each level, another for its first call) and the return into MeetAndWalk. Above
  // it, the test's own frames, gtest's and the C library's: more than ten.
  EXPECT_LE(cached, 6);
  EXPECT_GT(shallow.cfi_result - cached, 10);
}

// A walk from a call path walked before takes the rest of the last walk (RuleMemo, Replay) as long
// as the stack words that walk read still hold: from the same site again it takes nearly every
// frame; from a caller that called the same function from another call site (the same frames at
// the same addresses, one return address different), it stops at that word and walks on, giving
// libgcc's frames all the same.
__attribute__((noinline)) int CallFromHere(Walks* walks) {
  WalkBoth(walks);
  asm volatile("");  // not a tail call
  return 1;
}

__attribute__((noinline)) int CallTwice(Walks* first, Walks* second) {
  int n = CallFromHere(first);
  n += CallFromHere(second);  // the same frame below, another return address into this one
  asm volatile("");
  return n;
}

std::uint64_t Replayed(FrameRuleCache* cache, StackWindow* window) {
  RuleMemo* memo = cache->ClaimMemo(window);
  std::uint64_t replayed = memo != nullptr ? memo->replayed : 0;
  FrameRuleCache::ReleaseMemo(memo);
  return replayed;
}

TEST(CfiUnwinderTest, WalksReplayTheLastWalkWhileItsWordsHold) {
  Walker walker(true);
  Walks a{&walker, {}, {}}, b{&walker, {}, {}}, again{&walker, {}, {}};
  CallTwice(&a, &b);
  ASSERT_GT(a.cfi_result, 0);
  ASSERT_GT(b.cfi_result, 0);
  EXPECT_EQ(a.cfi, a.libgcc);
  EXPECT_EQ(b.cfi, b.libgcc);
  // The two walks differ in one frame only: the return into CallTwice.
  ASSERT_EQ(a.cfi.size(), b.cfi.size());
  int different = 0;
  for (std::size_t i = 0; i < a.cfi.size(); ++i) different += a.cfi[i] != b.cfi[i];
  EXPECT_EQ(different, 1);
  // The second replayed the frames below that word, not those above it (it stopped there), and
  // every frame taken is right (above). A walk from the same site as the last replays nearly all.
  const std::uint64_t before = Replayed(walker.cache, &walker.window);
  CallFromHere(&again);
  EXPECT_EQ(again.cfi, again.libgcc);
  const std::uint64_t replayed = Replayed(walker.cache, &walker.window) - before;
  EXPECT_GE(replayed + 3, again.cfi.size()) << "replayed " << replayed;
}

// Code the distribution compiled: libc's qsort calling a comparator, the loader's
// dl_iterate_phdr calling back (through its lock), pthread_once.
Walks* g_callback_walks;

int CompareAndWalk(const void* a, const void* b) {
  if (g_callback_walks != nullptr && g_callback_walks->cfi.empty()) WalkBoth(g_callback_walks);
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

int PhdrCallback(dl_phdr_info*, size_t, void* context) {
  WalkBoth(context);
  return 1;
}

TEST(CfiUnwinderTest, SameFramesAsLibgccThroughLibcAndTheLoader) {
  Walker walker;
  for (int round = 0; round < 2; ++round) {
    Walks walks{&walker, {}, {}};
    g_callback_walks = &walks;
    int values[64];
    for (int i = 0; i < 64; ++i) values[i] = (i * 37) % 64;
    qsort(values, 64, sizeof(int), CompareAndWalk);
    g_callback_walks = nullptr;
    ASSERT_GT(walks.cfi_result, 0);
    EXPECT_EQ(walks.cfi, walks.libgcc);

    Walks loader{&walker, {}, {}};
    dl_iterate_phdr(PhdrCallback, &loader);
    ASSERT_GT(loader.cfi_result, 0);
    EXPECT_EQ(loader.cfi, loader.libgcc);
  }
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  static Walks* once_walks;
  Walks walks{&walker, {}, {}};
  once_walks = &walks;
  pthread_once(&once, [] { WalkBoth(once_walks); });
  ASSERT_GT(walks.cfi_result, 0);
  EXPECT_EQ(walks.cfi, walks.libgcc);
}

TEST(CfiUnwinderTest, HandsSignalFramesToLibgcc) {
  static Walker walker;
  static int result;
  struct sigaction action = {}, previous;
  action.sa_handler = [](int) {
    void* frames[kMaxFrames];
    result = CfiBacktrace(frames, kMaxFrames, walker.cache, &walker.window);
  };
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
  raise(SIGUSR1);
  sigaction(SIGUSR1, &previous, nullptr);
  EXPECT_EQ(result, -1);
}

// Realigned frames: gcc 12 describes them with rbp, which the walker follows; a compiler that
// uses a CFA expression gets -1 instead. Either way, never other frames than libgcc's.
TEST(CfiUnwinderTest, RealignedFramesAreWalkedOrHandedOver) {
  Walker walker;
  for (int round = 0; round < 2; ++round) {
    Walks walks{&walker, {}, {}};
    cfi_frames::Descend(Style::kRealigned, 3, WalkBoth, &walks);
    EXPECT_GT(walks.libgcc.size(), 3u);
    if (walks.cfi_result != -1) {
      EXPECT_EQ(walks.cfi, walks.libgcc);
    }
  }
}

TEST(CfiUnwinderTest, StopsAtTheOutermostFrameWithinMax) {
  Walker walker;
  void* frames[kMaxFrames];
  int all = CfiBacktrace(frames, kMaxFrames, walker.cache, &walker.window);
  ASSERT_GT(all, 2);
  EXPECT_LT(all, kMaxFrames);  // the walk ended at _start, not at the limit
  EXPECT_EQ(CfiBacktrace(frames, 2, walker.cache, &walker.window), 2);
}

TEST(CfiUnwinderTest, StartsANewWindowOnAnotherStack) {
  Walker walker;
  walker.window = {0x1000, 0x2000};  // a window left from some other stack
  ExpectSameAsLibgcc(&walker, Style::kPlain, 5);
  auto here = reinterpret_cast<std::uintptr_t>(&walker);
  EXPECT_LE(walker.window.low, here);
  EXPECT_GT(walker.window.high, here);
}

FrameRule RuleForTest(std::uintptr_t pc) {
  return FrameRule::Step((pc & 16) != 0, static_cast<std::int64_t>(pc % 4096) * 8,
                         FrameRule::FramePointer::kSaved, -16);
}

TEST(FrameRuleCacheTest, FindsWhatWasInsertedUntilInvalidated) {
  FrameRuleCache::Slot slots[64] = {};
  FrameRuleCache cache;
  cache.Init(slots, 64);
  EXPECT_EQ(cache.Find(0x401000).kind(), FrameRule::Kind::kUnset);
  cache.Insert(0x401000, RuleForTest(0x401000));
  EXPECT_EQ(cache.Find(0x401000).word(), RuleForTest(0x401000).word());
  cache.Invalidate();
  EXPECT_EQ(cache.Find(0x401000).kind(), FrameRule::Kind::kUnset);
  cache.Insert(0x401000, FrameRule::End());
  EXPECT_EQ(cache.Find(0x401000).kind(), FrameRule::Kind::kEnd);
  // Far more pcs than slots: each is found right after its insertion (the window replaces old
  // entries), and whatever is found is that pc's rule.
  for (std::uintptr_t pc = 0x500000; pc < 0x500000 + 1000 * 24; pc += 24) {
    cache.Insert(pc, RuleForTest(pc));
    EXPECT_EQ(cache.Find(pc).word(), RuleForTest(pc).word());
  }
  for (std::uintptr_t pc = 0x500000; pc < 0x500000 + 1000 * 24; pc += 24) {
    FrameRule found = cache.Find(pc);
    if (found.kind() != FrameRule::Kind::kUnset) {
      EXPECT_EQ(found.word(), RuleForTest(pc).word());
    }
  }
}

TEST(FrameRuleCacheTest, ConcurrentReadersNeverSeeAnotherPcsRule) {
  static FrameRuleCache::Slot slots[32];
  FrameRuleCache cache;
  cache.Init(slots, 32);
  std::atomic<bool> stop{false};
  std::atomic<long> wrong{0}, hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::uint64_t x = 0x9e3779b97f4a7c15ull * (t + 1);
      for (int i = 0; i < 200000; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        std::uintptr_t pc = 0x400000 + (x % 512) * 8;
        FrameRule found = cache.Find(pc);
        if (found.kind() == FrameRule::Kind::kUnset) {
          cache.Insert(pc, RuleForTest(pc));
        } else {
          hits.fetch_add(1, std::memory_order_relaxed);
          if (found.word() != RuleForTest(pc).word()) wrong.fetch_add(1);
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop.load()) {
      cache.Invalidate();
      std::this_thread::yield();
    }
  });
  for (int t = 0; t < 4; ++t) threads[t].join();
  stop.store(true);
  threads.back().join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(hits.load(), 0);
}

TEST(FrameRuleTest, PacksAndUnpacks) {
  FrameRule rule = FrameRule::Step(true, 4096 + 16, FrameRule::FramePointer::kSaved, -56);
  EXPECT_EQ(rule.kind(), FrameRule::Kind::kStep);
  EXPECT_TRUE(rule.cfa_from_rbp());
  EXPECT_EQ(rule.cfa_offset(), 4112);
  EXPECT_EQ(rule.rbp(), FrameRule::FramePointer::kSaved);
  EXPECT_EQ(rule.rbp_offset(), -56);
  FrameRule unknown = FrameRule::Step(false, 8, FrameRule::FramePointer::kUnknown, 0);
  EXPECT_FALSE(unknown.cfa_from_rbp());
  EXPECT_EQ(unknown.rbp(), FrameRule::FramePointer::kUnknown);
  EXPECT_EQ(
      FrameRule::Step(false, std::int64_t{1} << 40, FrameRule::FramePointer::kUnchanged, 0).kind(),
      FrameRule::Kind::kFallback);
  EXPECT_EQ(FrameRule::Step(false, 8, FrameRule::FramePointer::kSaved, 1 << 20).kind(),
            FrameRule::Kind::kFallback);
}

TEST(FrameRuleTest, NoObjectMeansEndAndIsNotCacheable) {
  bool in_object = true;
  EXPECT_EQ(ComputeFrameRule(0x10, &in_object).kind(), FrameRule::Kind::kEnd);
  EXPECT_FALSE(in_object);
}

}  // namespace
}  // namespace heaprec::preload
