#include "preload/process_mappings.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "preload/elf_notes.h"
#include "preload/unloaded_libraries.h"

namespace heaprec::preload {
namespace {

std::uint64_t ParseHex(char** cursor) {
  std::uint64_t v = 0;
  char* p = *cursor;
  for (;; ++p) {
    char c = *p;
    if (c >= '0' && c <= '9') {
      v = v * 16 + static_cast<std::uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v = v * 16 + static_cast<std::uint64_t>(c - 'a' + 10);
    } else {
      break;
    }
  }
  *cursor = p;
  return v;
}

void SkipField(char** cursor) {
  char* p = *cursor;
  while (*p != ' ' && *p != '\0') ++p;
  while (*p == ' ') ++p;
  *cursor = p;
}

}  // namespace

ProcessMappings::~ProcessMappings() {
  memory_.Deallocate(text_, text_capacity_);
  memory_.DeallocateArray(mappings_, capacity_);
  memory_.Deallocate(build_ids_, capacity_ * kBuildIdHexBytes);
}

bool ProcessMappings::ReadMapsFile() {
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::size_t size = 0;
  bool ok = true;
  for (;;) {
    if (size + 4096 + 1 > text_capacity_) {
      std::size_t capacity = text_capacity_ == 0 ? 64 * 1024 : text_capacity_ * 2;
      char* fresh = static_cast<char*>(memory_.Allocate(capacity));
      if (fresh == nullptr) {
        ok = false;
        break;
      }
      if (size != 0) std::memcpy(fresh, text_, size);
      memory_.Deallocate(text_, text_capacity_);
      text_ = fresh;
      text_capacity_ = capacity;
    }
    ssize_t n = read(fd, text_ + size, text_capacity_ - size - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    size += static_cast<std::size_t>(n);
  }
  close(fd);
  if (ok) text_[size] = '\0';
  return ok;
}

// One line: "start-limit perms offset dev inode   path". Keeps executable mappings only: frames are
// return addresses, which always fall in executable code.
bool ProcessMappings::ParseLine(char* line) {
  char* p = line;
  std::uint64_t start = ParseHex(&p);
  if (*p++ != '-') return true;
  std::uint64_t limit = ParseHex(&p);
  while (*p == ' ') ++p;
  bool executable = p[0] != '\0' && p[1] != '\0' && p[2] == 'x';
  SkipField(&p);
  std::uint64_t offset = ParseHex(&p);
  while (*p == ' ') ++p;
  SkipField(&p);  // device
  SkipField(&p);  // inode
  if (!executable || *p == '\0') return true;
  return Append(start, limit, offset, p, "");
}

bool ProcessMappings::Append(std::uint64_t start, std::uint64_t limit, std::uint64_t offset,
                             const char* path, const char* build_id) {
  if (count_ == capacity_) {
    std::size_t capacity = capacity_ == 0 ? 64 : capacity_ * 2;
    auto* fresh = memory_.AllocateArray<ProfileMapping>(capacity);
    auto* ids = static_cast<char*>(memory_.Allocate(capacity * kBuildIdHexBytes));
    if (fresh == nullptr || ids == nullptr) {
      memory_.DeallocateArray(fresh, capacity);
      memory_.Deallocate(ids, capacity * kBuildIdHexBytes);
      return false;
    }
    if (count_ != 0) {
      std::memcpy(fresh, mappings_, count_ * sizeof(ProfileMapping));
      std::memcpy(ids, build_ids_, count_ * kBuildIdHexBytes);
    }
    memory_.DeallocateArray(mappings_, capacity_);
    memory_.Deallocate(build_ids_, capacity_ * kBuildIdHexBytes);
    mappings_ = fresh;
    build_ids_ = ids;
    capacity_ = capacity;
    for (std::size_t i = 0; i < count_; ++i)
      mappings_[i].build_id = build_ids_ + i * kBuildIdHexBytes;
  }
  char* id = build_ids_ + count_ * kBuildIdHexBytes;
  std::size_t id_length = std::strlen(build_id);
  if (id_length >= kBuildIdHexBytes) id_length = 0;
  std::memcpy(id, build_id, id_length);
  id[id_length] = '\0';
  mappings_[count_++] = {start, limit, offset, path, id};
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

void ProcessMappings::AttachBuildIds() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        auto* self = static_cast<ProcessMappings*>(data);
        char hex[kBuildIdHexBytes] = {};
        if (!GnuBuildIdHex(info, hex)) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          std::uint64_t low = info->dlpi_addr + ph.p_vaddr, high = low + ph.p_memsz;
          for (std::size_t m = 0; m < self->count_; ++m) {
            ProfileMapping& mapping = self->mappings_[m];
            if (mapping.start < high && low < mapping.limit) {
              std::memcpy(const_cast<char*>(mapping.build_id), hex, kBuildIdHexBytes);
            }
          }
        }
        return 0;
      },
      this);
}

bool ProcessMappings::Read() {
  if (!ReadMapsFile()) return false;
  for (char* line = text_; *line != '\0';) {
    char* end = std::strchr(line, '\n');
    if (end != nullptr) *end = '\0';
    if (!ParseLine(line)) return false;
    if (end == nullptr) break;
    line = end + 1;
  }
  AttachBuildIds();
  AddUnloadedLibraries();
  return true;
}

}  // namespace heaprec::preload
