#include "preload/objects/process_mappings.h"

#include <limits.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "preload/objects/loaded_objects.h"
#include "preload/objects/unloaded_libraries.h"

namespace heaprec::preload {

ProcessMappings::~ProcessMappings() {
  memory_.DeallocateArray(mappings_, capacity_);
  memory_.Deallocate(build_ids_, capacity_ * kBuildIdHexBytes);
  memory_.Deallocate(paths_, capacity_ * PATH_MAX);
}

bool ProcessMappings::Covered(std::uint64_t pc) const {
  if (last_hit_ < count_ && mappings_[last_hit_].start <= pc && pc < mappings_[last_hit_].limit) {
    return true;
  }
  for (std::size_t i = 0; i < count_; ++i) {
    if (mappings_[i].start <= pc && pc < mappings_[i].limit) {
      last_hit_ = i;
      return true;
    }
  }
  return false;
}

bool ProcessMappings::AddObject(const LoadedObject& object) {
  for (int i = 0; i < object.segment_count; ++i) {
    if (!Append(object.segments[i].start, object.segments[i].limit, object.segments[i].file_offset,
                object.path, object.build_id)) {
      return false;
    }
  }
  return true;
}

// A frame outside every known mapping names a new object, or code no object contains (JIT code),
// which stays without a mapping.
bool ProcessMappings::AddFrames(const HeapSnapshot& snapshot, StackId stack, std::uint64_t* seen) {
  return snapshot.ForEachFrameOnce(stack, seen, [this](std::uint64_t pc) {
    if (Covered(pc)) return true;
    LoadedObject object;
    return !DescribeObjectAt(pc, &object) || AddObject(object);
  });
}

bool ProcessMappings::Append(std::uint64_t start, std::uint64_t limit, std::uint64_t offset,
                             const char* path, const char* build_id) {
  if (count_ == capacity_) {
    std::size_t capacity = capacity_ == 0 ? 16 : capacity_ * 2;
    auto* fresh = memory_.AllocateArray<ProfileMapping>(capacity);
    auto* ids = static_cast<char*>(memory_.Allocate(capacity * kBuildIdHexBytes));
    auto* paths = static_cast<char*>(memory_.Allocate(capacity * PATH_MAX));
    if (fresh == nullptr || ids == nullptr || paths == nullptr) {
      memory_.DeallocateArray(fresh, capacity);
      memory_.Deallocate(ids, capacity * kBuildIdHexBytes);
      memory_.Deallocate(paths, capacity * PATH_MAX);
      return false;
    }
    if (count_ != 0) {
      std::memcpy(fresh, mappings_, count_ * sizeof(ProfileMapping));
      std::memcpy(ids, build_ids_, count_ * kBuildIdHexBytes);
      std::memcpy(paths, paths_, count_ * PATH_MAX);
    }
    memory_.DeallocateArray(mappings_, capacity_);
    memory_.Deallocate(build_ids_, capacity_ * kBuildIdHexBytes);
    memory_.Deallocate(paths_, capacity_ * PATH_MAX);
    mappings_ = fresh;
    build_ids_ = ids;
    paths_ = paths;
    capacity_ = capacity;
    for (std::size_t i = 0; i < count_; ++i) {
      mappings_[i].build_id = build_ids_ + i * kBuildIdHexBytes;
      mappings_[i].path = paths_ + i * PATH_MAX;
    }
  }
  std::size_t path_length = std::strlen(path);
  if (path_length >= PATH_MAX) path_length = 0;
  char* path_copy = paths_ + count_ * PATH_MAX;
  std::memcpy(path_copy, path, path_length);
  path_copy[path_length] = '\0';
  char* id = build_ids_ + count_ * kBuildIdHexBytes;
  std::size_t id_length = std::strlen(build_id);
  if (id_length >= kBuildIdHexBytes) id_length = 0;
  std::memcpy(id, build_id, id_length);
  id[id_length] = '\0';
  mappings_[count_++] = {start, limit, offset, path_copy, id};
  return true;
}

void ProcessMappings::AddUnloadedLibraries() {
  const std::size_t mapped_now = count_;
  struct Context {
    ProcessMappings* self;
    std::size_t mapped_now;
  } context = {this, mapped_now};
  ForEachUnloadedMapping(
      [](const ProfileMapping& m, void* data) {
        auto* c = static_cast<Context*>(data);
        for (std::size_t i = 0; i < c->mapped_now; ++i) {
          const ProfileMapping& current = c->self->mappings_[i];
          if (m.start < current.limit && current.start < m.limit) return;  // addresses reused
        }
        c->self->Append(m.start, m.limit, m.file_offset, m.path, m.build_id);
      },
      &context);
  if (count_ != mapped_now) {
    std::sort(mappings_, mappings_ + count_,
              [](const ProfileMapping& a, const ProfileMapping& b) { return a.start < b.start; });
  }
}

// Stacks share their outer frames (main, the interpreter's loop, a recursion): each node is
// visited once, not once per stack through it. python3 in exact mode, deep stacks: every frame of
// every stack had been 34 of a profile write's 182 million instructions (docs/benchmarks.md,
// part 14).
bool ProcessMappings::Read(const HeapSnapshot& snapshot) {
  const std::size_t seen_words = (std::size_t{snapshot.node_bound()} + 63) / 64;
  std::uint64_t* seen = nullptr;
  if (seen_words != 0) {
    seen = memory_.AllocateZeroedArray<std::uint64_t>(seen_words);
    if (seen == nullptr) return false;
  }
  bool ok = true;
  const HeapSnapshot::Object* objects = snapshot.objects();
  for (std::size_t i = 0; ok && i < snapshot.object_count(); ++i) {
    if (i > 0 && objects[i].stack == objects[i - 1].stack) continue;  // sorted: stacks repeat
    ok = AddFrames(snapshot, objects[i].stack, seen);
  }
  const AllocationTotals* history = snapshot.history();
  for (std::size_t i = 0; ok && i < snapshot.history_count(); ++i) {
    if (i > 0 && history[i].stack == history[i - 1].stack) continue;
    ok = AddFrames(snapshot, history[i].stack, seen);
  }
  memory_.DeallocateArray(seen, seen_words);
  if (!ok) return false;
  std::sort(mappings_, mappings_ + count_,
            [](const ProfileMapping& a, const ProfileMapping& b) { return a.start < b.start; });
  AddUnloadedLibraries();
  return true;
}

}  // namespace heaprec::preload
