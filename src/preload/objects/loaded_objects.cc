#include "preload/objects/loaded_objects.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

#include "preload/objects/build_id_note.h"
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

// Fills in what the program headers say. The loader maps an object's first segment from file
// offset 0, so its ELF header, and normally its program headers, sit at map_start. Read through
// the kernel (ReadOwnMemory), not directly: a dump describes objects while the program's other
// threads may be unloading them, and an unmapped header must give "not described", not SIGSEGV.
bool ReadProgramHeaders(LoadedObject* out) {
  constexpr int kMaxProgramHeaders = 64;
  constexpr std::size_t kMaxNoteBytes = 1024;
  ElfW(Ehdr) ehdr;
  if (out->map_end - out->map_start < sizeof(ehdr) ||
      !ReadOwnMemory(&ehdr, out->map_start, sizeof(ehdr)) ||
      std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_phentsize != sizeof(ElfW(Phdr)) ||
      ehdr.e_phnum > kMaxProgramHeaders ||
      ehdr.e_phoff + ehdr.e_phnum * sizeof(ElfW(Phdr)) > out->map_end - out->map_start) {
    return false;
  }
  ElfW(Phdr) phdrs[kMaxProgramHeaders];
  if (!ReadOwnMemory(phdrs, out->map_start + ehdr.e_phoff, ehdr.e_phnum * sizeof(ElfW(Phdr)))) {
    return false;
  }
  const std::uint64_t page = static_cast<std::uint64_t>(getpagesize());
  out->segment_count = 0;
  out->build_id[0] = '\0';
  for (int i = 0; i < ehdr.e_phnum; ++i) {
    const ElfW(Phdr)& ph = phdrs[i];
    if (ph.p_type == PT_NOTE && out->build_id[0] == '\0') {
      alignas(ElfW(Nhdr)) char notes[kMaxNoteBytes];
      std::size_t size = ph.p_memsz < sizeof(notes) ? ph.p_memsz : sizeof(notes);
      if (ReadOwnMemory(notes, out->base + ph.p_vaddr, size))
        BuildIdHex(notes, size, out->build_id);
    }
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 ||
        out->segment_count == LoadedObject::kMaxSegments) {
      continue;
    }
    std::uint64_t start = (out->base + ph.p_vaddr) & ~(page - 1);
    std::uint64_t limit = (out->base + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
    out->segments[out->segment_count++] = {start, limit, ph.p_offset & ~(page - 1)};
  }
  return out->segment_count > 0;
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
  if (name[0] == '\0' || !CopyPath(name, out->path) || !ReadProgramHeaders(out)) return false;
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
