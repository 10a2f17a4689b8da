// Sampled blocks carry a tag below the program's pointer (src/preload/tagged_blocks.h). This
// program uses blocks from every allocation entry point the way programs do: fills each to its
// malloc_usable_size (so a usable size that overstates the block corrupts glibc's next chunk
// header, which glibc's free detects and aborts on), checks alignment and calloc's zeroes, grows
// and shrinks them through realloc chains (in place and moved, from aligned blocks too), and frees
// them from another thread than the one that allocated them. Prints one line per check; the output
// must be the same with heaprec in exact mode (every block tagged), at a small interval (some
// tagged) and without heaprec.
//   rel_tagged [ROUNDS]
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <new>
#include <thread>
#include <vector>

namespace {

struct Block {
  void* p;
  size_t size;
  size_t alignment;
  unsigned char fill;
  bool cxx;          // from operator new: freed with operator delete
  bool cxx_aligned;  // from the align_val_t form
};

int g_failures = 0;
void Check(bool ok, const char* what, size_t detail) {
  if (!ok && g_failures++ < 10) printf("FAILED %s (%zu)\n", what, detail);
}

unsigned char Byte(const Block& b, size_t i) { return static_cast<unsigned char>(b.fill + i * 7); }

void Fill(Block& b) {
  // Up to the usable size: heaprec must report only what is the program's to write.
  size_t usable = malloc_usable_size(b.p);
  Check(usable >= b.size, "malloc_usable_size >= request", b.size);
  auto* bytes = static_cast<unsigned char*>(b.p);
  for (size_t i = 0; i < usable; ++i) bytes[i] = Byte(b, i);
}

bool Intact(const Block& b, size_t n) {
  auto* bytes = static_cast<unsigned char*>(b.p);
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i] != Byte(b, i)) return false;
  }
  return true;
}

Block Allocate(int kind, size_t size, unsigned char fill) {
  Block b = {nullptr, size, 16, fill, false, false};
  switch (kind) {
    case 0:
      b.p = malloc(size);
      break;
    case 1: {
      b.p = calloc(1, size);
      bool zero = true;
      for (size_t i = 0; i < size; ++i) zero = zero && static_cast<unsigned char*>(b.p)[i] == 0;
      Check(zero, "calloc zeroed", size);
      break;
    }
    case 2:
      b.alignment = 64;
      b.p = memalign(64, size);
      break;
    case 3:
      b.alignment = 4096;
      b.p = aligned_alloc(4096, size);
      break;
    case 4:
      b.alignment = 256;
      Check(posix_memalign(&b.p, 256, size) == 0, "posix_memalign", size);
      break;
    case 5:
      b.alignment = static_cast<size_t>(getpagesize());
      b.p = valloc(size);
      break;
    case 6:
      b.alignment = static_cast<size_t>(getpagesize());
      b.p = pvalloc(size);
      break;
    case 7:
      b.cxx = true;
      b.p = ::operator new(size);
      break;
    default:
      b.cxx = b.cxx_aligned = true;
      b.alignment = 128;
      b.p = ::operator new (size, std::align_val_t{128});
      break;
  }
  Check(b.p != nullptr, "allocation", size);
  Check(reinterpret_cast<uintptr_t>(b.p) % b.alignment == 0, "alignment", b.alignment);
  Fill(b);
  return b;
}

void Release(Block& b) {
  Check(Intact(b, b.size), "contents before free", b.size);
  if (b.cxx_aligned) {
    ::operator delete (b.p, std::align_val_t{128});
  } else if (b.cxx) {
    ::operator delete(b.p);
  } else {
    free(b.p);
  }
}

// realloc from any C block (aligned ones included: realloc keeps only malloc's alignment).
void Grow(Block& b, size_t size) {
  size_t kept = b.size < size ? b.size : size;
  void* q = realloc(b.p, size);
  Check(q != nullptr, "realloc", size);
  b.p = q;
  b.size = size;
  Check(Intact(b, kept), "contents kept by realloc", size);
  Fill(b);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 300;
  unsigned seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffff; };
  std::vector<Block> blocks;
  size_t reallocs = 0, allocations = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int kind = 0; kind < 9; ++kind) {
      size_t size = 1 + next() % (kind == 0 ? 70000 : 3000);
      blocks.push_back(Allocate(kind, size, static_cast<unsigned char>(r + kind)));
      ++allocations;
    }
    // Grow and shrink some C blocks through realloc, in place or moved.
    for (Block& b : blocks) {
      if (!b.cxx && next() % 4 == 0) {
        Grow(b, 1 + next() % 9000);
        ++reallocs;
      }
    }
    // Free half of them from another thread, in random order.
    std::vector<Block> handed;
    for (size_t i = 0; i < blocks.size();) {
      if (next() % 2 == 0) {
        handed.push_back(blocks[i]);
        blocks[i] = blocks.back();
        blocks.pop_back();
      } else {
        ++i;
      }
    }
    std::thread([&handed] {
      for (Block& b : handed) Release(b);
    }).join();
  }
  // realloc(p, 0) and realloc(NULL, n) on the rest, then free all.
  for (Block& b : blocks) {
    if (!b.cxx && next() % 3 == 0) {
      Check(Intact(b, b.size), "contents before realloc(p, 0)", b.size);
      void* none = realloc(b.p, 0);  // frees the block and returns null (glibc)
      Check(none == nullptr, "realloc(p, 0) returns null", b.size);
      b.p = nullptr;
    }
  }
  for (Block& b : blocks) {
    if (b.p != nullptr) Release(b);
  }
  Block fresh = {realloc(nullptr, 5000), 5000, 16, 9, false, false};
  Fill(fresh);
  Release(fresh);
  printf("tagged: %zu allocations, %zu reallocs, %d failures\n", allocations, reallocs, g_failures);
  return g_failures == 0 ? 0 : 1;
}
