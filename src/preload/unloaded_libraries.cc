#include "preload/unloaded_libraries.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

#include "core/mutex.h"

namespace heaprec::preload {
namespace {

struct RememberedMapping {
  ProfileMapping mapping;
  RememberedMapping* next;
};

Mutex g_lock;
RememberedMapping* g_remembered = nullptr;  // guarded by g_lock; entries live for the process

std::uint64_t PageSize() { return static_cast<std::uint64_t>(getpagesize()); }

struct Search {
  LoadedObject* object;
  bool found;
};

int DescribeCallback(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  LoadedObject* object = search->object;
  if (info->dlpi_addr != object->base || info->dlpi_name == nullptr ||
      std::strcmp(info->dlpi_name, object->path) != 0) {
    return 0;
  }
  search->found = true;
  if (!GnuBuildIdHex(info, object->build_id)) object->build_id[0] = '\0';
  const std::uint64_t page = PageSize();
  object->segment_count = 0;
  for (int i = 0; i < info->dlpi_phnum && object->segment_count < LoadedObject::kMaxSegments; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    // The same page-aligned range /proc/self/maps would show for this segment.
    std::uint64_t start = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
    std::uint64_t limit = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
    object->segments[object->segment_count++] = {start, limit, ph.p_offset & ~(page - 1)};
  }
  return 1;
}

}  // namespace

bool DescribeLoadedObject(void* handle, LoadedObject* out) {
  link_map* map = nullptr;
  if (handle == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr || map->l_name[0] == '\0') {
    return false;
  }
  std::size_t length = std::strlen(map->l_name);
  if (length >= sizeof(out->path)) return false;
  std::memcpy(out->path, map->l_name, length + 1);
  out->base = map->l_addr;
  Search search = {out, false};
  dl_iterate_phdr(DescribeCallback, &search);
  return search.found && out->segment_count > 0;
}

bool IsStillLoaded(const LoadedObject& object) {
  LoadedObject probe;
  probe.base = object.base;
  std::memcpy(probe.path, object.path, std::strlen(object.path) + 1);
  Search search = {&probe, false};
  dl_iterate_phdr(DescribeCallback, &search);
  return search.found;
}

void RememberUnloaded(const LoadedObject& object, MemoryResource& memory) {
  MutexLock lock(g_lock);
  std::size_t path_bytes = std::strlen(object.path) + 1;
  char* path = nullptr;
  char* build_id = nullptr;
  for (int i = 0; i < object.segment_count; ++i) {
    bool known = false;
    for (RememberedMapping* r = g_remembered; r != nullptr && !known; r = r->next) {
      known = r->mapping.start == object.segments[i].start &&
              r->mapping.limit == object.segments[i].limit &&
              std::strcmp(r->mapping.path, object.path) == 0;
    }
    if (known) continue;
    if (path == nullptr) {  // one copy of the path and build id, shared by the object's segments
      path = static_cast<char*>(memory.Allocate(path_bytes));
      build_id = static_cast<char*>(memory.Allocate(kBuildIdHexBytes));
      if (path == nullptr || build_id == nullptr) return;
      std::memcpy(path, object.path, path_bytes);
      std::memcpy(build_id, object.build_id, kBuildIdHexBytes);
    }
    auto* entry = static_cast<RememberedMapping*>(memory.Allocate(sizeof(RememberedMapping)));
    if (entry == nullptr) return;
    entry->mapping = {object.segments[i].start, object.segments[i].limit,
                      object.segments[i].file_offset, path, build_id};
    entry->next = g_remembered;
    g_remembered = entry;
  }
}

void ForEachUnloadedMapping(void (*visit)(const ProfileMapping&, void*), void* context) {
  MutexLock lock(g_lock);
  for (RememberedMapping* r = g_remembered; r != nullptr; r = r->next) visit(r->mapping, context);
}

void LockUnloadedForFork() { g_lock.Lock(); }
void UnlockUnloadedAfterForkInParent() { g_lock.Unlock(); }
void ResetUnloadedAfterForkInChild() { g_lock.ResetAfterFork(); }

}  // namespace heaprec::preload
