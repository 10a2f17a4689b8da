#include "preload/alloc/real_allocator.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "preload/objects/own_image.h"

namespace heaprec::preload {
namespace {

std::atomic<int> g_state{0};  // 0 unresolved, 1 resolving, 2 resolved
__thread bool t_resolving __attribute__((tls_model("initial-exec")));

bool IsPowerOfTwo(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// glibc exports no __libc_ names for posix_memalign and aligned_alloc; these give glibc 2.36's
// results from __libc_memalign: posix_memalign rejects alignments that are not a power-of-two
// multiple of sizeof(void*) with EINVAL (and leaves errno as the allocation left it), aligned_alloc
// accepts any alignment like memalign (the power-of-two check only came with glibc 2.38).
int GlibcPosixMemalign(void** out, std::size_t alignment, std::size_t size) {
  if (!IsPosixMemalignAlignment(alignment)) return EINVAL;
  void* block = __libc_memalign(alignment, size);
  if (block == nullptr) return ENOMEM;
  *out = block;
  return 0;
}

void* GlibcAlignedAlloc(std::size_t alignment, std::size_t size) {
  return __libc_memalign(alignment, size);
}

// glibc exports malloc_usable_size under that name only, which heaprec's own definition hides.
using UsableSizeFn = std::size_t (*)(void*);
UsableSizeFn GlibcUsableSize() {
  return reinterpret_cast<UsableSizeFn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
}

RealAllocator Glibc() {
  return {__libc_malloc,
          __libc_free,
          __libc_calloc,
          __libc_realloc,
          __libc_memalign,
          GlibcPosixMemalign,
          GlibcAlignedAlloc,
          __libc_valloc,
          __libc_pvalloc,
          GlibcUsableSize(),
          RealAllocator::kTagsRead,
          true};
}

// What another allocator may lack, built on posix_memalign, which every allocator that replaces
// malloc provides (it is POSIX). Used only when that allocator is in charge.
std::size_t PageSize() { return static_cast<std::size_t>(getpagesize()); }
void* AlignedVia(std::size_t alignment, std::size_t size) {
  std::size_t a = sizeof(void*);
  while (a < alignment) a <<= 1;  // memalign rounds odd alignments up, as glibc's does
  void* p = nullptr;
  return g_real.posix_memalign(&p, a, size) == 0 ? p : nullptr;
}
void* FallbackCalloc(std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = g_real.malloc(bytes);
  if (p != nullptr) memset(p, 0, bytes);
  return p;
}
void* FallbackAlignedAlloc(std::size_t alignment, std::size_t size) {
  if (!IsPowerOfTwo(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return AlignedVia(alignment, size);
}
void* FallbackValloc(std::size_t size) { return AlignedVia(PageSize(), size); }
void* FallbackPvalloc(std::size_t size) {
  return AlignedVia(PageSize(), (size + PageSize() - 1) & ~(PageSize() - 1));
}

// Not dladdr, which also looks for the nearest symbol by reading the object's whole symbol table:
// 15-36 us a call here (bench/vm/first_touch.c), in every process's start-up.
bool InHeaprec(const void* address) {
  return OwnLoadedRange(0).Contains(reinterpret_cast<std::uintptr_t>(address));
}

// A non-PIE program that takes the address of malloc gets a "canonical PLT entry": an undefined
// symbol with an address, which dlsym(RTLD_DEFAULT) returns and which jumps to the real definition
// (heaprec's). It is not an allocator: calling it from heaprec would recurse.
bool IsPltStub(void* address) {
  Dl_info info;
  void* extra = nullptr;  // dladdr1 returns the ElfW(Sym) of the symbol found here
  if (dladdr1(address, &info, &extra, RTLD_DL_SYMENT) == 0 || extra == nullptr) return false;
  return static_cast<const ElfW(Sym)*>(extra)->st_shndx == SHN_UNDEF;
}

// `name` as the program sees it, skipping heaprec's own definition and PLT stubs.
void* Lookup(const char* name) {
  void* fn = dlsym(RTLD_DEFAULT, name);
  if (fn == nullptr || InHeaprec(fn) || IsPltStub(fn)) fn = dlsym(RTLD_NEXT, name);
  return fn;
}

// The loaded object whose code holds `address` (its link map), or null. _dl_find_object is
// lock-free and short; dladdr would also search the object's symbols for the nearest one, about
// 85,000 instructions in glibc's: a tenth of a small program's whole start-up, twice.
const void* ObjectOf(void* address) {
  dl_find_object found;
  return address != nullptr && _dl_find_object(address, &found) == 0 ? found.dlfo_link_map
                                                                     : nullptr;
}

// `name` from the object `object`, or `fallback` when that object does not define it.
template <typename Fn>
Fn From(const void* object, const char* name, Fn fallback) {
  void* fn = Lookup(name);
  if (fn == nullptr || ObjectOf(fn) != object) return fallback;
  return reinterpret_cast<Fn>(fn);
}

RealAllocator Resolve() {
  void* malloc_fn = Lookup("malloc");
  // Which object defines the malloc in charge, asked of the loader: not whether it is the address
  // heaprec's own reference to __libc_malloc binds to. tcmalloc defines __libc_malloc too (an alias
  // of its malloc), and when it comes before glibc that reference binds to it: heaprec took
  // tcmalloc for glibc, read a "tag" below every block freed (the end of the block before it, in
  // tcmalloc), and freed the blocks whose last word was negative as its own samples: a crash.
  // gnu_get_libc_version is glibc's alone.
  const void* chosen = ObjectOf(malloc_fn);
  const void* glibc = ObjectOf(reinterpret_cast<void*>(gnu_get_libc_version));
  if (chosen == nullptr || glibc == nullptr || chosen == glibc) return Glibc();
  RealAllocator a = {};
  a.malloc = reinterpret_cast<void* (*)(std::size_t)>(malloc_fn);
  a.free = From(chosen, "free", static_cast<void (*)(void*)>(nullptr));
  a.realloc = From(chosen, "realloc", static_cast<void* (*)(void*, std::size_t)>(nullptr));
  a.posix_memalign = From(chosen, "posix_memalign",
                          static_cast<int (*)(void**, std::size_t, std::size_t)>(nullptr));
  // A partial malloc replacement is not one heaprec can forward to consistently.
  if (a.free == nullptr || a.realloc == nullptr || a.posix_memalign == nullptr) return Glibc();
  a.calloc = From(chosen, "calloc", FallbackCalloc);
  a.memalign = From(chosen, "memalign", AlignedVia);
  a.aligned_alloc = From(chosen, "aligned_alloc", FallbackAlignedAlloc);
  a.valloc = From(chosen, "valloc", FallbackValloc);
  a.pvalloc = From(chosen, "pvalloc", FallbackPvalloc);
  // What the program would call without heaprec, whichever library defines it.
  a.usable_size = reinterpret_cast<UsableSizeFn>(Lookup("malloc_usable_size"));
  if (a.usable_size == nullptr) a.usable_size = GlibcUsableSize();
  a.lowest_tagged = RealAllocator::kTagsNotRead;
  a.glibc = false;
  return a;
}

// Resolves once. Returns false for a nested call made by the resolving thread itself, which must
// then be served by glibc; a thread racing the resolution waits for it.
bool EnsureResolved() {
  if (g_state.load(std::memory_order_acquire) == 2) return true;
  if (t_resolving) return false;
  int expected = 0;
  if (g_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    t_resolving = true;
    RealAllocator resolved = Resolve();
    t_resolving = false;
    g_real = resolved;
    g_state.store(2, std::memory_order_release);
    return true;
  }
  while (g_state.load(std::memory_order_acquire) != 2) sched_yield();
  return true;
}

// The trampolines g_real starts with.
void* ResolveMalloc(std::size_t n) {
  return EnsureResolved() ? g_real.malloc(n) : __libc_malloc(n);
}
void ResolveFree(void* p) { EnsureResolved() ? g_real.free(p) : __libc_free(p); }
void* ResolveCalloc(std::size_t c, std::size_t n) {
  return EnsureResolved() ? g_real.calloc(c, n) : __libc_calloc(c, n);
}
void* ResolveRealloc(void* p, std::size_t n) {
  return EnsureResolved() ? g_real.realloc(p, n) : __libc_realloc(p, n);
}
void* ResolveMemalign(std::size_t a, std::size_t n) {
  return EnsureResolved() ? g_real.memalign(a, n) : __libc_memalign(a, n);
}
int ResolvePosixMemalign(void** out, std::size_t a, std::size_t n) {
  return EnsureResolved() ? g_real.posix_memalign(out, a, n) : GlibcPosixMemalign(out, a, n);
}
void* ResolveAlignedAlloc(std::size_t a, std::size_t n) {
  return EnsureResolved() ? g_real.aligned_alloc(a, n) : GlibcAlignedAlloc(a, n);
}
void* ResolveValloc(std::size_t n) {
  return EnsureResolved() ? g_real.valloc(n) : __libc_valloc(n);
}
void* ResolvePvalloc(std::size_t n) {
  return EnsureResolved() ? g_real.pvalloc(n) : __libc_pvalloc(n);
}
std::size_t ResolveUsableSize(void* p) {
  return EnsureResolved() ? g_real.usable_size(p) : GlibcUsableSize()(p);
}

}  // namespace

bool IsPosixMemalignAlignment(std::size_t alignment) {
  return alignment % sizeof(void*) == 0 && IsPowerOfTwo(alignment / sizeof(void*));
}

RealAllocator g_real = {ResolveMalloc,
                        ResolveFree,
                        ResolveCalloc,
                        ResolveRealloc,
                        ResolveMemalign,
                        ResolvePosixMemalign,
                        ResolveAlignedAlloc,
                        ResolveValloc,
                        ResolvePvalloc,
                        ResolveUsableSize,
                        RealAllocator::kTagsNotRead,
                        false};

void ResolveRealAllocator() { EnsureResolved(); }

void UseUntaggedBlocks() {
  ResolveRealAllocator();
  g_real.lowest_tagged = RealAllocator::kTagsNotRead;
}

const char* ForeignProgramMalloc(bool* in_executable) {
  void* fn = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info;
  if (fn == nullptr || InHeaprec(fn) || IsPltStub(fn) || dladdr(fn, &info) == 0) {
    return nullptr;  // the program's malloc calls reach heaprec
  }
  // The loader names the executable "": a malloc defined there wins over every preloaded one.
  dl_find_object found;
  *in_executable = _dl_find_object(fn, &found) == 0 && found.dlfo_link_map != nullptr &&
                   found.dlfo_link_map->l_name != nullptr && found.dlfo_link_map->l_name[0] == '\0';
  return info.dli_fname != nullptr ? info.dli_fname : "unknown";
}

}  // namespace heaprec::preload
