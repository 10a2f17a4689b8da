#include "preload/objects/unloaded_libraries.h"

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

}  // namespace

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
