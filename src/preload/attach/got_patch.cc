// The GOT routing of an injected library (got_patch.h).
#include "preload/attach/got_patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

extern "C" const ElfW(Ehdr) __ehdr_start;  // heaprec's own ELF header

namespace heaprec::preload {
namespace {

struct Hook {
  const char* name;
  bool memory;  // an allocation or release entry point: routed only while attached
  std::uintptr_t heaprec = 0;
  std::uintptr_t program = 0;  // what the program binds: dlsym(RTLD_DEFAULT)
  // When `program` is a non-PIE executable's canonical PLT entry (it takes the function's address),
  // every other object binds to that entry and the executable's own slot holds the definition:
  // this, learnt from that slot (pointing it at its own entry would loop).
  std::uintptr_t real = 0;
  std::uint32_t hash = 0;
};

// Every entry point of exports.map that heaprec interposes (the public API is not one).
Hook g_hooks[] = {
    {"malloc", true},
    {"calloc", true},
    {"posix_memalign", true},
    {"aligned_alloc", true},
    {"memalign", true},
    {"valloc", true},
    {"pvalloc", true},
    {"_Znwm", true},
    {"_Znam", true},
    {"_ZnwmRKSt9nothrow_t", true},
    {"_ZnamRKSt9nothrow_t", true},
    {"_ZnwmSt11align_val_t", true},
    {"_ZnamSt11align_val_t", true},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t", true},
    {"_ZnamSt11align_val_tRKSt9nothrow_t", true},
    {"free", true},
    {"realloc", true},
    {"reallocarray", true},
    {"malloc_usable_size", true},  // a sampled block's size is the program's
    {"_ZdlPv", true},
    {"_ZdaPv", true},
    {"_ZdlPvm", true},
    {"_ZdaPvm", true},
    {"_ZdlPvRKSt9nothrow_t", true},
    {"_ZdaPvRKSt9nothrow_t", true},
    {"_ZdlPvSt11align_val_t", true},
    {"_ZdaPvSt11align_val_t", true},
    {"_ZdlPvmSt11align_val_t", true},
    {"_ZdaPvmSt11align_val_t", true},
    {"_ZdlPvSt11align_val_tRKSt9nothrow_t", true},
    {"_ZdaPvSt11align_val_tRKSt9nothrow_t", true},
    {"sigaction", false},
    {"__sigaction", false},
    {"signal", false},
    {"bsd_signal", false},
    {"sysv_signal", false},
    {"__sysv_signal", false},
    {"_exit", false},
    {"_Exit", false},
    {"setuid", false},
    {"seteuid", false},
    {"setreuid", false},
    {"setresuid", false},
    {"execve", false},
    {"execv", false},
    {"execvp", false},
    {"execvpe", false},
    {"fexecve", false},
    {"execveat", false},
    {"execl", false},
    {"execlp", false},
    {"execle", false},
    {"dlclose", false},
};

HookSet g_set = HookSet::kAll;
unsigned long long g_seen_adds = 0;  // dl_iterate_phdr's load counter at the last routing
bool g_prepared = false;
std::atomic<bool> g_routing{false};
std::atomic<HookSet> g_wanted{HookSet::kAll};  // the set the latest caller asked for

// FNV-1a: most relocations name something else, and a hash compare rejects them cheaply.
std::uint32_t Hash(const char* name) {
  std::uint32_t h = 2166136261u;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(name); *p != 0; ++p) {
    h = (h ^ *p) * 16777619u;
  }
  return h;
}

Hook* FindHook(const char* name) {
  std::uint32_t h = Hash(name);
  for (Hook& hook : g_hooks) {
    if (hook.hash == h && hook.heaprec != 0 && strcmp(hook.name, name) == 0) return &hook;
  }
  return nullptr;
}

bool Routed(const Hook& hook) { return g_set == HookSet::kAll || !hook.memory; }

// The dynamic section's pointers: relocated by the loader in place on this machine, but not in
// every object (a read-only dynamic section keeps file addresses), so both are accepted.
std::uintptr_t Pointer(const dl_phdr_info* object, ElfW(Addr) value) {
  return value < object->dlpi_addr ? object->dlpi_addr + value : value;
}

struct ObjectTables {
  const ElfW(Sym) * symbols = nullptr;
  const char* strings = nullptr;
  const ElfW(Rela) * relocations[2] = {};  // DT_JMPREL, DT_RELA
  std::size_t sizes[2] = {};
  std::uintptr_t relro_start = 0, relro_end = 0;
  std::uintptr_t start = UINTPTR_MAX, end = 0;  // the object's mapped addresses
};

bool ReadTables(const dl_phdr_info* object, ObjectTables* tables) {
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < object->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = object->dlpi_phdr[i];
    std::uintptr_t start = object->dlpi_addr + segment.p_vaddr;
    if (segment.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
    if (segment.p_type == PT_GNU_RELRO) {
      tables->relro_start = start;
      tables->relro_end = start + segment.p_memsz;
    }
    if (segment.p_type == PT_LOAD) {
      if (start < tables->start) tables->start = start;
      if (start + segment.p_memsz > tables->end) tables->end = start + segment.p_memsz;
    }
  }
  if (dynamic == nullptr) return false;
  bool plt_is_rela = true;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    switch (entry->d_tag) {
      case DT_SYMTAB:
        tables->symbols = reinterpret_cast<const ElfW(Sym)*>(Pointer(object, entry->d_un.d_ptr));
        break;
      case DT_STRTAB:
        tables->strings = reinterpret_cast<const char*>(Pointer(object, entry->d_un.d_ptr));
        break;
      case DT_JMPREL:
        tables->relocations[0] =
            reinterpret_cast<const ElfW(Rela)*>(Pointer(object, entry->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        tables->sizes[0] = entry->d_un.d_val;
        break;
      case DT_PLTREL:
        plt_is_rela = entry->d_un.d_val == DT_RELA;
        break;
      case DT_RELA:
        tables->relocations[1] =
            reinterpret_cast<const ElfW(Rela)*>(Pointer(object, entry->d_un.d_ptr));
        break;
      case DT_RELASZ:
        tables->sizes[1] = entry->d_un.d_val;
        break;
    }
  }
  if (!plt_is_rela) tables->relocations[0] = nullptr;  // not x86-64's format: leave it alone
  return tables->symbols != nullptr && tables->strings != nullptr;
}

// One 8-byte store; a slot under RELRO is writable for that store only.
void Store(std::uintptr_t slot, std::uintptr_t value, const ObjectTables& tables) {
  bool relro = slot >= tables.relro_start && slot + sizeof(void*) <= tables.relro_end;
  std::uintptr_t page = slot & ~(static_cast<std::uintptr_t>(getpagesize()) - 1);
  if (relro && mprotect(reinterpret_cast<void*>(page), static_cast<std::size_t>(getpagesize()),
                        PROT_READ | PROT_WRITE) != 0) {
    return;
  }
  __atomic_store_n(reinterpret_cast<std::uintptr_t*>(slot), value, __ATOMIC_RELEASE);
  if (relro) {
    mprotect(reinterpret_cast<void*>(page), static_cast<std::size_t>(getpagesize()), PROT_READ);
  }
}

bool IsOwnObject(const dl_phdr_info* object) {
  const auto* own = reinterpret_cast<const ElfW(Phdr)*>(
      reinterpret_cast<const char*>(&__ehdr_start) + __ehdr_start.e_phoff);
  return object->dlpi_phdr == own;
}

int RouteObject(dl_phdr_info* object, std::size_t, void* data) {
  int* changed = static_cast<int*>(data);
  if (IsOwnObject(object) || object->dlpi_addr == getauxval(AT_BASE) ||
      object->dlpi_addr == getauxval(AT_SYSINFO_EHDR)) {
    return 0;  // heaprec itself, the loader, the vDSO
  }
  ObjectTables tables;
  if (!ReadTables(object, &tables)) return 0;
  for (int table = 0; table < 2; ++table) {
    const ElfW(Rela)* relocations = tables.relocations[table];
    if (relocations == nullptr) continue;
    std::size_t count = tables.sizes[table] / sizeof(ElfW(Rela));
    for (std::size_t i = 0; i < count; ++i) {
      const ElfW(Rela)& r = relocations[i];
      unsigned type = ELF64_R_TYPE(r.r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      std::size_t symbol_index = ELF64_R_SYM(r.r_info);
      if (symbol_index == 0) continue;
      const ElfW(Sym)& symbol = tables.symbols[symbol_index];
      Hook* hook = FindHook(tables.strings + symbol.st_name);
      if (hook == nullptr) continue;
      std::uintptr_t slot = object->dlpi_addr + r.r_offset;
      std::uintptr_t value =
          __atomic_load_n(reinterpret_cast<std::uintptr_t*>(slot), __ATOMIC_ACQUIRE);
      // A lazily bound slot not called yet points back into its own object's PLT: it would bind
      // to the program's definition at the first call, so it counts as that.
      bool inside = value >= tables.start && value < tables.end;
      bool unbound = type == R_X86_64_JUMP_SLOT && symbol.st_shndx == SHN_UNDEF && inside;
      bool owns_entry = symbol.st_shndx == SHN_UNDEF && hook->program >= tables.start &&
                        hook->program < tables.end;
      std::uintptr_t original = hook->program;
      if (owns_entry) {
        if (hook->real == 0 && value != hook->heaprec && !inside) hook->real = value;
        if (hook->real == 0) continue;  // nothing safe to restore it to
        original = hook->real;
      }
      std::uintptr_t wanted = Routed(*hook) ? hook->heaprec : original;
      if (value == wanted) continue;
      if (value != original && value != hook->heaprec && !unbound) continue;
      Store(slot, wanted, tables);
      ++*changed;
    }
  }
  return 0;
}

int ReadAdds(dl_phdr_info* object, std::size_t size, void* data) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(object->dlpi_adds)) {
    *static_cast<unsigned long long*>(data) = object->dlpi_adds;
  }
  return 1;  // the counter is the same in every call: the first is enough
}

unsigned long long LoadCount() {
  unsigned long long adds = 0;
  dl_iterate_phdr(ReadAdds, &adds);
  return adds;
}

}  // namespace

bool PrepareHooks(void* own_handle) {
  if (g_prepared) return true;
  for (Hook& hook : g_hooks) {
    hook.hash = Hash(hook.name);
    void* heaprec = dlsym(own_handle, hook.name);
    void* program = dlsym(RTLD_DEFAULT, hook.name);
    // Not defined for the program (no libstdc++: no operator new), or heaprec's own already:
    // nothing to route.
    if (heaprec == nullptr || program == nullptr || heaprec == program) continue;
    hook.heaprec = reinterpret_cast<std::uintptr_t>(heaprec);
    hook.program = reinterpret_cast<std::uintptr_t>(program);
  }
  g_prepared = g_hooks[0].heaprec != 0;  // malloc at least
  return g_prepared;
}

namespace {

// Routes every object to the set last asked for. The attach routes on the thread `heaprec attach`
// holds, the dump thread later: never both at once (one would make a RELRO page read-only under the
// other's store). A caller that finds the other at it leaves the work to it: the one at work
// routes again until the set last asked for is in place. So a fork child never waits for a flag
// its parent held, and an attach that comes while the dump thread routes new objects is not lost.
int RouteWanted() {
  if (g_routing.exchange(true, std::memory_order_acquire)) return 0;
  int changed = 0;
  for (;;) {
    HookSet target = g_wanted.load();
    g_set = target;
    g_seen_adds = LoadCount();
    dl_iterate_phdr(RouteObject, &changed);
    g_routing.store(false, std::memory_order_release);
    if (g_wanted.load() == target || g_routing.exchange(true, std::memory_order_acquire)) break;
  }
  return changed;
}

}  // namespace

int RouteHooks(HookSet set) {
  if (!g_prepared) return 0;
  g_wanted.store(set);
  return RouteWanted();
}

int RouteHooksInNewObjects() {
  if (!g_prepared || LoadCount() == g_seen_adds) return 0;
  return RouteWanted();  // never a set of its own: an attach or detach may be asking for another
}

void ResetRoutingInChild() {
  // The thread that held the flag was not copied by fork(): its routing stopped part-way, so the
  // child's dump thread routes every object again (a pass over slots already right changes none).
  if (g_routing.exchange(false, std::memory_order_relaxed)) g_seen_adds = 0;
}

}  // namespace heaprec::preload
