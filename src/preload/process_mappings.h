// The executable mappings of the current process, with the build id of the file behind each, for
// the pprof Mapping table. Read from /proc/self/maps (paths, offsets) and the loaded program
// headers (build-id notes, found with dl_iterate_phdr) at dump time.
//
// Runs in the profiled process on the dump path: no malloc (memory from the MemoryResource), takes
// the dynamic loader's lock briefly inside dl_iterate_phdr, not async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"
#include "core/pprof_writer.h"

namespace heaprec::preload {

class ProcessMappings {
 public:
  explicit ProcessMappings(MemoryResource& memory) : memory_(memory) {}
  ~ProcessMappings();
  ProcessMappings(const ProcessMappings&) = delete;
  ProcessMappings& operator=(const ProcessMappings&) = delete;

  // Reads the mappings; false when /proc/self/maps cannot be read or memory ran out.
  bool Read();
  const ProfileMapping* mappings() const { return mappings_; }
  std::size_t count() const { return count_; }

 private:
  bool ReadMapsFile();
  bool ParseLine(char* line);
  bool Append(std::uint64_t start, std::uint64_t limit, std::uint64_t offset, const char* path,
              const char* build_id);
  void AttachBuildIds();
  void AddUnloadedLibraries();  // libraries dlclose'd earlier, where nothing else is mapped now

  MemoryResource& memory_;
  char* text_ = nullptr;  // the maps file; paths point into it
  std::size_t text_capacity_ = 0;
  ProfileMapping* mappings_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
  char* build_ids_ = nullptr;  // 41 bytes per mapping: up to 20 bytes as hex, NUL
};

}  // namespace heaprec::preload
