// The pprof Mapping table of a profile: for every loaded object that holds a frame of the
// snapshot, its executable segments with the object's path and build id (see loaded_objects.h),
// plus the libraries dlclose'd earlier whose addresses nothing else has taken since.
//
// Runs on the dump path, also from a crash handler: no malloc (memory from the MemoryResource), no
// loader locks, no files. Takes the unloaded-library list's lock briefly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/heap_profile_encoder.h"
#include "core/heap_snapshot.h"
#include "core/memory_resource.h"

namespace heaprec::preload {

struct LoadedObject;

class ProcessMappings {
 public:
  explicit ProcessMappings(MemoryResource& memory) : memory_(memory) {}
  ~ProcessMappings();
  ProcessMappings(const ProcessMappings&) = delete;
  ProcessMappings& operator=(const ProcessMappings&) = delete;

  // Describes the objects behind the snapshot's frames; false when memory ran out.
  bool Read(const HeapSnapshot& snapshot);
  const ProfileMapping* mappings() const { return mappings_; }
  std::size_t count() const { return count_; }

 private:
  // `seen`: the nodes visited so far (HeapSnapshot::ForEachFrameOnce).
  bool AddFrames(const HeapSnapshot& snapshot, StackId stack, std::uint64_t* seen);
  bool AddObject(const LoadedObject& object);
  bool Append(std::uint64_t start, std::uint64_t limit, std::uint64_t offset, const char* path,
              const char* build_id);
  bool Covered(std::uint64_t pc) const;
  void AddUnloadedLibraries();  // libraries dlclose'd earlier, where nothing else is mapped now

  MemoryResource& memory_;
  ProfileMapping* mappings_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
  char* build_ids_ = nullptr;         // kBuildIdHexBytes per mapping
  char* paths_ = nullptr;             // PATH_MAX per mapping: paths are copied, objects may go away
  mutable std::size_t last_hit_ = 0;  // frames of one stack tend to fall in the same object
};

}  // namespace heaprec::preload
