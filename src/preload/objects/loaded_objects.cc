#include "preload/objects/loaded_objects.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "preload/objects/program_headers.h"
#include "preload/unwind/own_memory.h"

namespace heaprec::preload {
namespace {

char g_executable_path[PATH_MAX];  // written once at start-up

bool CopyPath(const char* from, char* to) {
  std::size_t length = std::strlen(from);
  if (length >= PATH_MAX) return false;
  std::memcpy(to, from, length + 1);
  return true;
}

// The span of the main program's PT_LOAD segments, from its program headers, which the kernel
// tells where to find (AT_PHDR). _dl_find_object gives the span of the one segment holding the
// address when the program's segments do not sit together (node: its headers at 0x400000, its
// code at 0xb72000 and 0x2600000), and the headers were looked for at its start, where they are
// not: every frame of the program went without a mapping, and so without a name. False when the
// headers cannot be read (the span found stays).
bool SpanOfMainProgram(std::uintptr_t base, LoadedObject* out) {
  constexpr unsigned long kMaxProgramHeaders = 64;
  const std::uintptr_t at = getauxval(AT_PHDR);
  const unsigned long count = getauxval(AT_PHNUM);
  ElfW(Phdr) phdrs[kMaxProgramHeaders];
  if (at == 0 || count == 0 || count > kMaxProgramHeaders ||
      !ReadOwnMemory(phdrs, at, count * sizeof(ElfW(Phdr)))) {
    return false;
  }
  std::uintptr_t start = UINTPTR_MAX, end = 0;
  for (unsigned long i = 0; i < count; ++i) {
    if (phdrs[i].p_type != PT_LOAD) continue;
    if (base + phdrs[i].p_vaddr < start) start = base + phdrs[i].p_vaddr;
    if (base + phdrs[i].p_vaddr + phdrs[i].p_memsz > end)
      end = base + phdrs[i].p_vaddr + phdrs[i].p_memsz;
  }
  if (start >= end) return false;
  out->map_start = start & ~(static_cast<std::uintptr_t>(getpagesize()) - 1);
  out->map_end = end;
  return true;
}

}  // namespace

void RememberExecutablePath() {
  ssize_t n = readlink("/proc/self/exe", g_executable_path, sizeof(g_executable_path) - 1);
  g_executable_path[n > 0 ? n : 0] = '\0';
}

bool DescribeObjectAt(std::uintptr_t address, LoadedObject* out) {
  dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(address), &found) != 0 ||
      found.dlfo_link_map == nullptr) {
    return false;
  }
  const link_map* map = found.dlfo_link_map;
  out->base = map->l_addr;
  out->map_start = reinterpret_cast<std::uintptr_t>(found.dlfo_map_start);
  out->map_end = reinterpret_cast<std::uintptr_t>(found.dlfo_map_end);
  // The loader names the executable "" (and the vDSO after its soname, which no file carries).
  const bool main_program = map->l_name == nullptr || map->l_name[0] == '\0';
  const char* name = main_program ? g_executable_path : map->l_name;
  if (name[0] == '\0' || !CopyPath(name, out->path)) return false;
  if (main_program) SpanOfMainProgram(out->base, out);
  // Read through the kernel, not directly: a dump describes objects while the program's other
  // threads may be unloading them, and an unmapped header must give "not described", not SIGSEGV.
  if (!ReadProgramHeaders(out, getpagesize(), ReadOwnMemory)) return false;
  // Still loaded now that it is described: if another thread unloaded it meanwhile, the name and
  // headers read may already belong to nothing (or to what was loaded in its place).
  dl_find_object again;
  return _dl_find_object(reinterpret_cast<void*>(address), &again) == 0 &&
         again.dlfo_link_map == found.dlfo_link_map && again.dlfo_map_start == found.dlfo_map_start;
}

bool DescribeLoadedObject(void* handle, LoadedObject* out) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr || map->l_name[0] == '\0' || map->l_ld == nullptr) {
    return false;
  }
  // The dynamic section lies inside the object: look the object up by it.
  return DescribeObjectAt(reinterpret_cast<std::uintptr_t>(map->l_ld), out) &&
         std::strcmp(out->path, map->l_name) == 0;
}

bool IsStillLoaded(const LoadedObject& object) {
  dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(object.segments[0].start), &found) != 0 ||
      found.dlfo_link_map == nullptr) {
    return false;
  }
  const link_map* map = found.dlfo_link_map;
  return map->l_addr == object.base && map->l_name != nullptr &&
         std::strcmp(map->l_name, object.path) == 0;
}

}  // namespace heaprec::preload
