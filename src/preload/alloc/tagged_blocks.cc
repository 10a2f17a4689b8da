#include "preload/alloc/tagged_blocks.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "preload/alloc/sampling.h"
#include "preload/process/signal_table.h"

namespace heaprec::preload {
namespace {

// Defers the program's asynchronous signals while heaprec calls glibc for a sampled block. That
// call is one the program did not make: larger, so in a size class its own requests may never use,
// and glibc may take its arena lock there where the program's call would have been served from
// the thread's cache. A signal handler that allocates (not async-signal-safe, but programs do it)
// would then wait for that lock forever, on the thread that holds it: SignalsInMallocTest hung so
// in the 14th run of a loop under load, the thread stopped in glibc's _int_malloc for a 516-byte
// request (a sampled 500), its handler waiting for the same arena. With the signals deferred, the
// handler runs once glibc has let the lock go. Synchronous signals (a fault inside glibc on a
// corrupted heap) are left alone: they cannot wait, and the program's crash handler must see them.
//
// The guard costs two system calls (about 2 us a pair on this project's machine: the 2-thread
// churn went from 1.04x to 1.09x the floor's CPU time with it on every sampled block), so it is
// taken only where it can matter: when the program has a handler of its own for an asynchronous
// signal, and not in exact mode, where every block is tagged and heaprec's requests replace the
// program's one for one, in the same pattern of size classes.
class SignalsDeferred {
 public:
  SignalsDeferred() : active_(ProgramHandlesAsynchronousSignals() && !SamplesEveryAllocation()) {
    if (!active_) return;
    sigset_t deferred;
    AsynchronousSignals(&deferred);
    active_ = pthread_sigmask(SIG_BLOCK, &deferred, &saved_) == 0;
  }
  ~SignalsDeferred() {
    if (active_) pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  SignalsDeferred(const SignalsDeferred&) = delete;
  SignalsDeferred& operator=(const SignalsDeferred&) = delete;

 private:
  bool active_;
  sigset_t saved_;
};

// Offsets of aligned blocks are the alignment: the limit keeps a request of an absurd alignment
// (which glibc fails) from wrapping the size.
constexpr std::uint64_t kMaxOffset = 0xffff'ffffull;
constexpr std::uint64_t kAlignedBit = std::uint64_t{1} << 63;

void StoreWord(void* block, std::ptrdiff_t at, std::uint64_t word) {
  std::memcpy(static_cast<char*>(block) + at, &word, sizeof(word));
}

// A fresh tag: no ticket yet.
void WriteTag(char* block, std::uint64_t offset) {
  if (offset != kTagOffset) StoreWord(block, -24, offset);
  StoreWord(block, -16, offset != kTagOffset ? kAlignedBit : 0);
  StoreWord(block, -8, kTagBit);
}

std::uint64_t OffsetOf(const void* block) {
  return (TagWord(block, -16) & kAlignedBit) != 0 ? TagWord(block, -24) : kTagOffset;
}

char* BaseOf(const void* block) {
  return const_cast<char*>(static_cast<const char*>(block)) - OffsetOf(block);
}

// glibc's memalign rounds an alignment up to a power of two, and below 16 means malloc's own.
std::size_t TagAlignment(std::size_t alignment) {
  std::size_t a = kTagOffset;
  while (a < alignment && a != 0) a <<= 1;
  return a;  // 0 when no power of two fits: the request cannot succeed anyway
}

}  // namespace

void* AllocateUntagged(AllocKind kind, std::size_t size, std::size_t alignment) {
  switch (kind) {
    case AllocKind::kMalloc:
      return g_real.malloc(size);
    case AllocKind::kCalloc:
      return g_real.calloc(1, size);
    case AllocKind::kMemalign:
      return g_real.memalign(alignment, size);
    case AllocKind::kAlignedAlloc:
      return g_real.aligned_alloc(alignment, size);
    case AllocKind::kValloc:
      return g_real.valloc(size);
    case AllocKind::kPvalloc:
      return g_real.pvalloc(size);
  }
  return nullptr;
}

void* AllocateTagged(AllocKind kind, std::size_t size, std::size_t alignment, bool* tagged) {
  const std::size_t page = static_cast<std::size_t>(getpagesize());
  std::size_t offset = kTagOffset;
  switch (kind) {
    case AllocKind::kMalloc:
    case AllocKind::kCalloc:
      break;
    case AllocKind::kMemalign:
    case AllocKind::kAlignedAlloc:
      offset = TagAlignment(alignment);
      break;
    case AllocKind::kValloc:
      offset = page;
      break;
    case AllocKind::kPvalloc:
      offset = page;
      size = size == 0 ? page : (size + page - 1) & ~(page - 1);
      if (size == 0) offset = 0;  // the rounding wrapped: glibc fails it
      break;
  }
  std::size_t total;
  if (offset == 0 || offset > kMaxOffset || __builtin_add_overflow(size, offset, &total)) {
    *tagged = false;
    return AllocateUntagged(kind, size, alignment);
  }
  void* base;
  {
    SignalsDeferred deferred;
    if (kind == AllocKind::kCalloc) {
      base = g_real.calloc(1, total);
    } else if (offset == kTagOffset) {
      base = g_real.malloc(total);
    } else {
      base = g_real.memalign(offset, total);
    }
  }
  *tagged = base != nullptr;
  if (base == nullptr) return nullptr;
  char* block = static_cast<char*>(base) + offset;
  WriteTag(block, offset);
  return block;
}

void SetTicket(void* block, const ObjectTicket& ticket) {
  const std::uint64_t aligned = TagWord(block, -16) & kAlignedBit;
  StoreWord(block, -16, aligned | static_cast<std::uint64_t>(ticket.contribution));
  StoreWord(block, -8, kTagBit | (std::uint64_t{ticket.stack} & 0x7fff'ffff) << 32 | ticket.handle);
}

void FreeTagged(void* block) {
  char* base = BaseOf(block);
  StoreWord(block, -8, 0);
  SignalsDeferred deferred;
  g_real.free(base);
}

std::size_t TaggedUsableSize(const void* block) {
  return g_real.usable_size(BaseOf(block)) - OffsetOf(block);
}

bool ReallocTagged(void* block, std::size_t size, void** moved) {
  if (OffsetOf(block) != kTagOffset) return false;
  std::size_t total;
  if (__builtin_add_overflow(size, kTagOffset, &total)) {
    errno = ENOMEM;
    *moved = nullptr;
    return true;
  }
  void* base;
  {
    SignalsDeferred deferred;
    base = g_real.realloc(BaseOf(block), total);
  }
  *moved = nullptr;
  if (base == nullptr) return true;
  char* block_moved = static_cast<char*>(base) + kTagOffset;
  WriteTag(block_moved, kTagOffset);
  *moved = block_moved;
  return true;
}

}  // namespace heaprec::preload
