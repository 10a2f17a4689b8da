#include "cli/glibc_heap.h"

#include <sys/uio.h>
#include <time.h>

#include <algorithm>
#include <cstring>

namespace heaprec::cli {
namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kHeapMaxSize = 64ull << 20;  // HEAP_MAX_SIZE on 64-bit
constexpr std::uint64_t kMinChunk = 32;              // MINSIZE
constexpr std::uint64_t kFencepost = 16;             // what ends a heap glibc moved on from
constexpr std::uint64_t kPrevInUse = 1, kIsMmapped = 2, kFlags = 7;
// sizeof(struct malloc_state) since glibc 2.27: where an arena's first chunk starts after its
// state (tried first; neighbouring offsets after it, so that another layout is found too).
constexpr std::uint64_t kArenaStateBytes = 2200;

std::uint64_t NowMs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::uint64_t(t.tv_sec) * 1000 + std::uint64_t(t.tv_nsec) / 1000000;
}

// Reads the process's memory through a 64 KiB window: a walk of small chunks reads every byte
// once, a walk of large ones only their headers.
class Window {
 public:
  Window(const RemoteProcess& process, std::uint64_t end) : process_(process), end_(end) {}

  bool Word(std::uint64_t address, std::uint64_t* value) {
    if (address < start_ || address + 8 > start_ + size_) {
      start_ = address;
      size_ = std::min<std::uint64_t>(sizeof(bytes_), end_ - address);
      if (size_ < 8 || !process_.Read(start_, bytes_, size_)) {
        size_ = 0;
        return false;
      }
    }
    std::memcpy(value, bytes_ + (address - start_), sizeof(*value));
    return true;
  }

 private:
  const RemoteProcess& process_;
  std::uint64_t end_;
  std::uint64_t start_ = 0, size_ = 0;
  unsigned char bytes_[65536];
};

struct Walk {
  const RemoteProcess& process;
  std::uint64_t deadline_ms;
  GlibcHeap* heap;

  void Count(std::uint64_t chunk, bool mmapped) {
    schema::HeapSizeClass& c = heap->by_size[HeapSizeClassOf(chunk, mmapped)];
    ++c.blocks;
    c.bytes += chunk;
    heap->in_use += chunk;
  }

  // The chunks of one heap, from its first chunk at `begin` to its end. True when the walk ended
  // exactly there (at the top chunk, or a fencepost), with every header in between in bounds.
  // `count` false: only checks (a candidate start).
  bool Chunks(std::uint64_t begin, std::uint64_t end, bool count) {
    Window window(process, end);
    std::uint64_t p = begin, size = 0;
    if (end - begin < kMinChunk || !window.Word(p + 8, &size)) return false;
    for (std::uint64_t steps = 1;; ++steps) {
      std::uint64_t chunk = size & ~kFlags;
      if (chunk == kFencepost && end - p <= 4 * kFencepost) return true;
      if (chunk < kMinChunk || chunk % 16 != 0 || chunk > end - p) return false;
      std::uint64_t next = p + chunk;
      if (end - next < kMinChunk) return true;  // p was the top chunk
      std::uint64_t next_size = 0;
      if (!window.Word(next + 8, &next_size)) return false;
      // The main arena's top ends at the break, which may be short of the mapping's last page.
      if ((next_size & ~kFlags) == 0 && end - next < kPage) return true;
      if (count && (next_size & kPrevInUse) != 0) Count(chunk, false);
      p = next;
      size = next_size;
      if (steps % 65536 == 0 && NowMs() > deadline_ms) return false;
    }
  }

  void Heap(std::uint64_t begin, std::uint64_t end) {
    ++heap->heaps;
    if (!Chunks(begin, end, true)) ++heap->heaps_incomplete;
  }

  // A 64 MiB-aligned non-main heap at `at` inside a mapping that ends at `mapping_end`; false
  // when its heap_info does not check out.
  bool ArenaHeap(std::uint64_t at, std::uint64_t mapping_end) {
    std::uint64_t info[4];  // ar_ptr, prev, size, mprotect_size
    if (!process.Read(at, info, sizeof(info))) return false;
    std::uint64_t arena = info[0], size = info[2], protected_size = info[3];
    std::uint64_t header = arena & (kHeapMaxSize - 1);  // sizeof(heap_info): the state follows it
    if (size < kPage || size % kPage != 0 || size > kHeapMaxSize || size > mapping_end - at ||
        protected_size < size || protected_size > kHeapMaxSize || header < 32 || header > 64 ||
        header % 16 != 0) {
      return false;
    }
    std::uint64_t end = at + size;
    if (arena != at + header) {  // a later heap of its arena: chunks right after heap_info
      Heap(at + header, end);
      return true;
    }
    // The arena's first heap: its state, then its chunks.
    std::uint64_t guess = (at + header + kArenaStateBytes + 15) & ~std::uint64_t{15};
    for (std::uint64_t candidate = guess; candidate < guess + 512; candidate += 16) {
      if (Chunks(candidate, end, false)) {
        Heap(candidate, end);
        return true;
      }
    }
    for (std::uint64_t candidate = guess - 16; candidate > at + header + 1024; candidate -= 16) {
      if (Chunks(candidate, end, false)) {
        Heap(candidate, end);
        return true;
      }
    }
    ++heap->heaps;
    ++heap->heaps_incomplete;
    return true;
  }

  // Chunks mmapped on their own, each at the start of a page: prev_size 0, its size with only
  // IS_MMAPPED set, a whole number of pages inside the mapping.
  void Mmapped(std::uint64_t start, std::uint64_t end) {
    constexpr std::size_t kBatch = 512;
    std::uint64_t headers[kBatch][2];
    iovec local[kBatch], remote[kBatch];
    std::uint64_t page = start;
    while (page < end && NowMs() <= deadline_ms) {
      std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kBatch, (end - page) / kPage));
      for (std::size_t i = 0; i < n; ++i) {
        local[i] = {headers[i], sizeof(headers[i])};
        remote[i] = {reinterpret_cast<void*>(page + i * kPage), sizeof(headers[i])};
      }
      ssize_t got = process_vm_readv(process.pid(), local, n, remote, n, 0);
      std::size_t read = got > 0 ? static_cast<std::size_t>(got) / sizeof(headers[0]) : 0;
      if (read == 0) return;
      std::uint64_t next = page + read * kPage;  // past what was read, unless a chunk leads on
      for (std::size_t i = 0; i < read;) {
        std::uint64_t at = page + i * kPage, chunk = headers[i][1] & ~kFlags;
        bool mmapped = headers[i][0] == 0 && (headers[i][1] & kFlags) == kIsMmapped &&
                       chunk >= kPage && chunk % kPage == 0 && chunk <= end - at;
        if (!mmapped) {
          ++i;
          continue;
        }
        Count(chunk, true);
        ++heap->mmapped_blocks;
        if (chunk / kPage >= read - i) {
          next = at + chunk;
          break;
        }
        i += static_cast<std::size_t>(chunk / kPage);
      }
      page = next;
    }
  }
};

bool IsAnonymousWritable(const Mapping& m) {
  return m.path.empty() && m.permissions.compare(0, 2, "rw") == 0;
}

}  // namespace

int HeapSizeClassOf(std::uint64_t chunk_size, bool mmapped) {
  // The smallest request that gets a chunk this size: a heap chunk is the request plus 8, rounded
  // up to 16; an mmapped one the request plus 16, rounded up to a page.
  std::uint64_t overhead = mmapped ? kPage + 15 : 23;
  std::uint64_t smallest = chunk_size > overhead ? chunk_size - overhead : 1;
  int k = 0;
  while (k + 1 < schema::kHeapSizeClasses && (std::uint64_t{1} << k) < smallest) ++k;
  return k;
}

GlibcHeap ReadGlibcHeap(const RemoteProcess& process, const std::vector<Mapping>& maps,
                        int budget_ms) {
  GlibcHeap heap;
  Walk walk{process, NowMs() + static_cast<std::uint64_t>(budget_ms), &heap};
  for (const Mapping& m : maps) {
    if (m.path == "[heap]") walk.Heap(m.start, m.end);
  }
  for (const Mapping& m : maps) {
    if (!IsAnonymousWritable(m)) continue;
    // Other arenas' heaps, then what lies between them: chunks mmapped on their own.
    std::uint64_t from = m.start;
    for (std::uint64_t at = (m.start + kHeapMaxSize - 1) & ~(kHeapMaxSize - 1); at < m.end;
         at += kHeapMaxSize) {
      if (!walk.ArenaHeap(at, m.end)) continue;
      walk.Mmapped(from, at);
      from = std::min(m.end, at + kHeapMaxSize);
    }
    walk.Mmapped(from, m.end);
  }
  return heap;
}

}  // namespace heaprec::cli
