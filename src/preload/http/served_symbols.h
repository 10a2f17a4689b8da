// The function names the HTTP endpoint's profiles carry (docs/design/http-endpoint.md, "What is
// served"): for each native frame of a snapshot, the function symbol of .symtab (else .dynsym)
// that contains it, in the file of the mapping that holds it, when that file has the mapping's
// build id. Go's pprof then shows the functions of a profile fetched from anywhere: it does not
// symbolize a mapping marked has_functions locally (go tool pprof's own local symbolization of a
// C++ PIE executable names few of its functions, and some wrongly), nor post its addresses to
// /debug/pprof/symbol.
//
// Runs on the HTTP server's thread, between the snapshot and its encoding, with no lock held:
// memory from the MemoryResource (the arena), bounded by the snapshot's distinct frames and
// kMaxNameBytes of names; files opened close-on-exec above the program's descriptors (OpenOwn) and
// read with pread (elf_symbols.h), one at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/heap_profile_encoder.h"
#include "core/heap_snapshot.h"
#include "core/memory_resource.h"
#include "preload/http/elf_symbols.h"

namespace heaprec::preload {

class ServedSymbols final : public AddressNamer {
 public:
  // Names past this many bytes are left out (their frames stay addresses): 8 MiB.
  static constexpr std::size_t kMaxNameBytes = 8u << 20;

  explicit ServedSymbols(MemoryResource& memory) : memory_(memory) {}
  ~ServedSymbols();
  ServedSymbols(const ServedSymbols&) = delete;
  ServedSymbols& operator=(const ServedSymbols&) = delete;

  // Names the frames of `snapshot` that fall in `mappings` (sorted by start). False when memory
  // ran out: the profile is then served with addresses only.
  bool Read(const HeapSnapshot& snapshot, const ProfileMapping* mappings, std::size_t count);

  const char* Name(std::uint64_t address, std::size_t mapping,
                   std::uint64_t* function_key) const override;
  bool NamesMapping(std::size_t index) const override;

 private:
  bool AddFrame(std::uint64_t pc);
  bool CollectFrames(const HeapSnapshot& snapshot);
  bool NameMapping(const ProfileMapping& mapping, std::size_t first, std::size_t last);
  std::int64_t StoreName(const char* name);

  MemoryResource& memory_;
  std::uint64_t* addresses_ = nullptr;  // the distinct frames, sorted
  std::size_t count_ = 0, capacity_ = 0;
  std::uint64_t* keys_ = nullptr;    // per address: its function's start, when named
  std::int64_t* names_ = nullptr;    // per address: its name's offset in pool_, -1 for none
  std::uint64_t* vaddrs_ = nullptr;  // scratch, per address
  SymbolMatch* matches_ = nullptr;   // scratch, per address
  bool* named_mappings_ = nullptr;
  std::size_t mapping_count_ = 0;
  char* pool_ = nullptr;
  std::size_t pool_size_ = 0, pool_capacity_ = 0;
};

}  // namespace heaprec::preload
