#include "preload/http/served_symbols.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/own_descriptors.h"
#include "preload/objects/loaded_objects.h"

namespace heaprec::preload {
namespace {

constexpr std::size_t kMaxName = 1024;  // longer names are cut

template <typename T>
void Release(MemoryResource& memory, T*& array, std::size_t count) {
  memory.DeallocateArray(array, count);
  array = nullptr;
}

}  // namespace

ServedSymbols::~ServedSymbols() {
  Release(memory_, addresses_, capacity_);
  Release(memory_, keys_, capacity_);
  Release(memory_, names_, capacity_);
  Release(memory_, vaddrs_, capacity_);
  Release(memory_, matches_, capacity_);
  Release(memory_, named_mappings_, mapping_count_);
  Release(memory_, pool_, pool_capacity_);
}

bool ServedSymbols::AddFrame(std::uint64_t pc) {
  if (count_ == capacity_) {
    std::size_t capacity = capacity_ == 0 ? 1024 : capacity_ * 2;
    auto* fresh = memory_.AllocateArray<std::uint64_t>(capacity);
    if (fresh == nullptr) return false;
    if (count_ != 0) std::memcpy(fresh, addresses_, count_ * sizeof(std::uint64_t));
    Release(memory_, addresses_, capacity_);
    addresses_ = fresh;
    capacity_ = capacity;
  }
  addresses_[count_++] = pc;
  return true;
}

// Every frame of the live objects' and the history's stacks, sorted, each once.
bool ServedSymbols::CollectFrames(const HeapSnapshot& snapshot) {
  auto add = [this](std::uint64_t pc) { return AddFrame(pc); };
  const HeapSnapshot::Object* objects = snapshot.objects();
  for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
    if (i > 0 && objects[i].stack == objects[i - 1].stack) continue;  // sorted: stacks repeat
    if (!snapshot.ForEachFrame(objects[i].stack, add)) return false;
  }
  const AllocationTotals* history = snapshot.history();
  for (std::size_t i = 0; i < snapshot.history_count(); ++i) {
    if (i > 0 && history[i].stack == history[i - 1].stack) continue;
    if (!snapshot.ForEachFrame(history[i].stack, add)) return false;
  }
  std::sort(addresses_, addresses_ + count_);
  count_ = static_cast<std::size_t>(std::unique(addresses_, addresses_ + count_) - addresses_);
  return true;
}

// The name's offset in the pool, -1 when the pool is full (or out of memory).
std::int64_t ServedSymbols::StoreName(const char* name) {
  const std::size_t size = std::strlen(name) + 1;
  if (pool_size_ + size > pool_capacity_) {
    std::size_t capacity = pool_capacity_ == 0 ? 64 * 1024 : pool_capacity_ * 2;
    while (capacity < pool_size_ + size) capacity *= 2;
    if (capacity > kMaxNameBytes) return -1;
    char* fresh = memory_.AllocateArray<char>(capacity);
    if (fresh == nullptr) return -1;
    if (pool_size_ != 0) std::memcpy(fresh, pool_, pool_size_);
    Release(memory_, pool_, pool_capacity_);
    pool_ = fresh;
    pool_capacity_ = capacity;
  }
  std::memcpy(pool_ + pool_size_, name, size);
  pool_size_ += size;
  return static_cast<std::int64_t>(pool_size_ - size);
}

// Names addresses_[first, last), all within `mapping`, from its file.
bool ServedSymbols::NameMapping(const ProfileMapping& mapping, std::size_t first,
                                std::size_t last) {
  int fd = OpenOwn(mapping.path, O_RDONLY, 0);
  if (fd < 0) return false;
  ElfSymbolFile file;
  bool named = false;
  if (file.Open(fd) && file.HasBuildId(mapping.build_id)) {
    // Runtime address -> file offset (through the mapping) -> virtual address (through the
    // PT_LOAD segment holding that offset). Addresses outside every segment get none.
    ElfSymbolFile::LoadSegment segment = {0, 0, 0};
    std::size_t count = 0;
    std::uint64_t* addresses = addresses_ + first;
    for (std::size_t k = 0; k < last - first; ++k) {
      const std::uint64_t offset = addresses[k] - mapping.start + mapping.file_offset;
      keys_[first + k] = 0;  // 0 until named: also "outside every segment" until Match
      if ((offset < segment.offset || offset - segment.offset >= segment.size) &&
          !file.SegmentAt(offset, &segment)) {
        segment = {0, 0, 0};
        vaddrs_[k] = k > 0 ? vaddrs_[k - 1] : 0;  // keeps them sorted; never named
        continue;
      }
      vaddrs_[k] = segment.vaddr + (offset - segment.offset);
      keys_[first + k] = 1;
      ++count;
    }
    // The vaddrs of one segment rise with the addresses; across segments they could fall back, so
    // sort them with their positions (ElfSymbolFile::Match takes them sorted).
    bool sorted = true;
    for (std::size_t k = 1; k < last - first && sorted; ++k) sorted = vaddrs_[k - 1] <= vaddrs_[k];
    if (count > 0 && sorted) {
      file.Match(vaddrs_, last - first, matches_);
      char name[kMaxName];
      std::uint64_t previous_name = 0;
      std::int64_t previous_stored = -1;
      for (std::size_t k = 0; k < last - first; ++k) {
        const SymbolMatch& match = matches_[k];
        if (!match.found || keys_[first + k] == 0) continue;
        // Consecutive addresses of one function share its stored name.
        std::int64_t stored = previous_stored;
        if (previous_stored < 0 || match.name_offset != previous_name) {
          if (!file.Name(match, name, sizeof(name))) continue;
          stored = StoreName(name);
          if (stored < 0) break;
          previous_name = match.name_offset;
          previous_stored = stored;
        }
        names_[first + k] = stored;
        keys_[first + k] = addresses[k] - vaddrs_[k] + match.start;
        named = true;
      }
      for (std::size_t k = 0; k < last - first; ++k) {
        if (names_[first + k] < 0) keys_[first + k] = 0;
      }
    }
  }
  close(fd);
  return named;
}

bool ServedSymbols::Read(const HeapSnapshot& snapshot, const ProfileMapping* mappings,
                         std::size_t count) {
  if (!CollectFrames(snapshot)) return false;
  keys_ = memory_.AllocateArray<std::uint64_t>(capacity_);
  names_ = memory_.AllocateArray<std::int64_t>(capacity_);
  vaddrs_ = memory_.AllocateArray<std::uint64_t>(capacity_);
  matches_ = memory_.AllocateArray<SymbolMatch>(capacity_);
  named_mappings_ = memory_.AllocateArray<bool>(count == 0 ? 1 : count);
  mapping_count_ = count == 0 ? 1 : count;
  if (capacity_ == 0 || keys_ == nullptr || names_ == nullptr || vaddrs_ == nullptr ||
      matches_ == nullptr || named_mappings_ == nullptr) {
    return false;
  }
  for (std::size_t i = 0; i < count_; ++i) names_[i] = -1;
  for (std::size_t m = 0; m < count; ++m) {
    std::size_t first = static_cast<std::size_t>(
        std::lower_bound(addresses_, addresses_ + count_, mappings[m].start) - addresses_);
    std::size_t last = first;
    while (last < count_ && addresses_[last] < mappings[m].limit) ++last;
    named_mappings_[m] = last > first && NameMapping(mappings[m], first, last);
  }
  // The scratch arrays are not needed while the profile is encoded.
  Release(memory_, vaddrs_, capacity_);
  Release(memory_, matches_, capacity_);
  return true;
}

const char* ServedSymbols::Name(std::uint64_t address, std::size_t /*mapping*/,
                                std::uint64_t* function_key) const {
  if (names_ == nullptr) return nullptr;
  const std::uint64_t* at = std::lower_bound(addresses_, addresses_ + count_, address);
  if (at == addresses_ + count_ || *at != address) return nullptr;
  const std::size_t i = static_cast<std::size_t>(at - addresses_);
  if (names_[i] < 0) return nullptr;
  *function_key = keys_[i];
  return pool_ + names_[i];
}

bool ServedSymbols::NamesMapping(std::size_t index) const {
  return named_mappings_ != nullptr && index < mapping_count_ && named_mappings_[index];
}

}  // namespace heaprec::preload
