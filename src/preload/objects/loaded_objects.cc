#include "preload/objects/loaded_objects.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

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
  const char* name =
      map->l_name != nullptr && map->l_name[0] != '\0' ? map->l_name : g_executable_path;
  if (name[0] == '\0' || !CopyPath(name, out->path)) return false;
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
