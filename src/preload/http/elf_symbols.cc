#include "preload/http/elf_symbols.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "preload/objects/build_id_note.h"

namespace heaprec::preload {
namespace {

constexpr std::uint32_t kMaxSections = 65535;  // e_shnum's range without SHN_XINDEX
constexpr std::size_t kSymbolsPerRead = 128;   // 3 KiB of Elf64_Sym on the stack per pread
constexpr std::size_t kMaxNoteBytes = 1024;    // a build-id note is 36 bytes
constexpr std::size_t kBuildIdHexBytes = 41;   // 20 bytes as hex, and a NUL

// Reads exactly `size` bytes at `offset`; false on a short read (a file truncated meanwhile).
bool ReadAt(int fd, void* buffer, std::size_t size, std::uint64_t offset) {
  auto* p = static_cast<char*>(buffer);
  while (size > 0) {
    ssize_t n = pread(fd, p, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool IsFunction(const Elf64_Sym& symbol) {
  const unsigned type = ELF64_ST_TYPE(symbol.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && symbol.st_shndx != SHN_UNDEF &&
         symbol.st_size != 0;
}

}  // namespace

bool ElfSymbolFile::Within(std::uint64_t offset, std::uint64_t size) const {
  return offset <= file_size_ && size <= file_size_ - offset;
}

bool ElfSymbolFile::Open(int fd) {
  fd_ = -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return false;
  file_size_ = static_cast<std::uint64_t>(st.st_size);
  Elf64_Ehdr header;
  if (!ReadAt(fd, &header, sizeof(header), 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] !=
          (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
      header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
      header.e_shnum > kMaxSections) {
    return false;
  }
  section_offset_ = header.e_shoff;
  section_count_ = header.e_shnum;
  if (!Within(section_offset_, std::uint64_t{section_count_} * sizeof(Elf64_Shdr))) return false;
  segment_count_ = header.e_phentsize == sizeof(Elf64_Phdr) ? header.e_phnum : 0;
  segment_offset_ = header.e_phoff;
  if (!Within(segment_offset_, std::uint64_t{segment_count_} * sizeof(Elf64_Phdr))) {
    segment_count_ = 0;
  }
  fd_ = fd;
  return true;
}

bool ElfSymbolFile::Section(std::uint32_t index, Elf64_Shdr* out) const {
  return fd_ >= 0 && index < section_count_ &&
         ReadAt(fd_, out, sizeof(*out), section_offset_ + std::uint64_t{index} * sizeof(*out));
}

bool ElfSymbolFile::SegmentAt(std::uint64_t offset, LoadSegment* out) const {
  for (std::uint32_t i = 0; fd_ >= 0 && i < segment_count_; ++i) {
    Elf64_Phdr segment;
    if (!ReadAt(fd_, &segment, sizeof(segment),
                segment_offset_ + std::uint64_t{i} * sizeof(segment))) {
      return false;
    }
    if (segment.p_type == PT_LOAD && offset >= segment.p_offset &&
        offset - segment.p_offset < segment.p_filesz) {
      *out = {segment.p_offset, segment.p_filesz, segment.p_vaddr};
      return true;
    }
  }
  return false;
}

void ElfSymbolFile::BuildId(char* hex) const {
  hex[0] = '\0';
  for (std::uint32_t i = 0; i < section_count_; ++i) {
    Elf64_Shdr section;
    if (!Section(i, &section)) return;
    if (section.sh_type != SHT_NOTE || !Within(section.sh_offset, section.sh_size)) continue;
    alignas(Elf64_Nhdr) char notes[kMaxNoteBytes];
    const std::size_t size =
        section.sh_size < sizeof(notes) ? static_cast<std::size_t>(section.sh_size) : sizeof(notes);
    if (ReadAt(fd_, notes, size, section.sh_offset) && BuildIdHex(notes, size, hex)) return;
  }
}

bool ElfSymbolFile::HasBuildId(const char* build_id) const {
  if (build_id[0] == '\0') return true;
  char file_id[kBuildIdHexBytes];
  BuildId(file_id);
  return std::strcmp(file_id, build_id) == 0;
}

void ElfSymbolFile::MatchTable(std::uint32_t type, const std::uint64_t* vaddrs, std::size_t count,
                               SymbolMatch* matches) const {
  Elf64_Shdr table, strings;
  std::uint32_t i = 0;
  for (; i < section_count_; ++i) {
    if (!Section(i, &table)) return;
    if (table.sh_type == type) break;
  }
  if (i == section_count_ || table.sh_entsize != sizeof(Elf64_Sym) ||
      !Within(table.sh_offset, table.sh_size) || table.sh_link == i ||
      !Section(table.sh_link, &strings) || strings.sh_type != SHT_STRTAB ||
      !Within(strings.sh_offset, strings.sh_size)) {
    return;
  }
  std::uint64_t total = table.sh_size / sizeof(Elf64_Sym);
  if (total > kMaxSymbols) total = kMaxSymbols;
  Elf64_Sym symbols[kSymbolsPerRead];
  for (std::uint64_t first = 0; first < total; first += kSymbolsPerRead) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(kSymbolsPerRead, total - first));
    if (!ReadAt(fd_, symbols, n * sizeof(Elf64_Sym), table.sh_offset + first * sizeof(Elf64_Sym))) {
      return;
    }
    for (std::size_t s = 0; s < n; ++s) {
      const Elf64_Sym& symbol = symbols[s];
      if (!IsFunction(symbol) || symbol.st_name >= strings.sh_size) continue;
      const std::uint64_t start = symbol.st_value;
      const std::uint64_t end = start + symbol.st_size;
      if (end < start) continue;  // wraps around: malformed
      for (std::size_t k =
               static_cast<std::size_t>(std::lower_bound(vaddrs, vaddrs + count, start) - vaddrs);
           k < count && vaddrs[k] < end; ++k) {
        SymbolMatch& match = matches[k];
        // A name from .symtab stands; within a table the smallest symbol wins (an inner one).
        if (match.found && (match.table != type || match.size <= symbol.st_size)) continue;
        match = {true,
                 type,
                 symbol.st_value,
                 symbol.st_size,
                 strings.sh_offset + symbol.st_name,
                 strings.sh_offset + strings.sh_size};
      }
    }
  }
}

void ElfSymbolFile::Match(const std::uint64_t* vaddrs, std::size_t count,
                          SymbolMatch* matches) const {
  for (std::size_t k = 0; k < count; ++k) matches[k] = SymbolMatch();
  if (fd_ < 0 || count == 0) return;
  MatchTable(SHT_SYMTAB, vaddrs, count, matches);
  MatchTable(SHT_DYNSYM, vaddrs, count, matches);
}

bool ElfSymbolFile::Name(const SymbolMatch& match, char* out, std::size_t capacity) const {
  if (capacity == 0) return false;
  out[0] = '\0';
  if (fd_ < 0 || !match.found || match.name_offset >= match.name_limit) return false;
  std::size_t size = capacity - 1;
  if (match.name_limit - match.name_offset < size) {
    size = static_cast<std::size_t>(match.name_limit - match.name_offset);
  }
  if (!ReadAt(fd_, out, size, match.name_offset)) return false;
  out[size] = '\0';
  for (char* c = out; *c != '\0'; ++c) {
    if (static_cast<unsigned char>(*c) < ' ' || *c == 0x7f) *c = '?';
  }
  return out[0] != '\0';
}

}  // namespace heaprec::preload
