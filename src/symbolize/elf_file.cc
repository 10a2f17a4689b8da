// ELF build-id and program-header helpers, on top of libelf and libdwelf.
#include "symbolize/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace heaprec::symbolize {

std::string ElfBuildId(Elf* elf) {
  const void* bits = nullptr;
  ssize_t len = dwelf_elf_gnu_build_id(elf, &bits);
  if (len <= 0 || bits == nullptr) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (ssize_t i = 0; i < len; ++i) {
    unsigned char byte = static_cast<const unsigned char*>(bits)[i];
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0xf];
  }
  return hex;
}

std::string ReadElfBuildId(const std::string& path) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string id;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    if (elf_kind(elf) == ELF_K_ELF) id = ElfBuildId(elf);
    elf_end(elf);
  }
  close(fd);
  return id;
}

bool HasDwarf(Elf* elf) {
  size_t names = 0;
  if (elf_getshdrstrndx(elf, &names) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0) {
      continue;
    }
    const char* name = elf_strptr(elf, names, shdr.sh_name);
    if (name != nullptr &&
        (std::strcmp(name, ".debug_info") == 0 || std::strcmp(name, ".zdebug_info") == 0)) {
      return true;
    }
  }
  return false;
}

ElfFacts ReadElfFacts(const std::string& path) {
  ElfFacts facts;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return facts;
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return facts;
  facts.readable = true;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    if (elf_kind(elf) == ELF_K_ELF) {
      facts.elf = true;
      facts.build_id = ElfBuildId(elf);
      facts.dwarf = HasDwarf(elf);
      GElf_Word crc = 0;
      if (const char* link = dwelf_elf_gnu_debuglink(elf, &crc)) {
        facts.debuglink = link;
        facts.debuglink_crc = crc;
      }
    }
    elf_end(elf);
  }
  close(fd);
  return facts;
}

std::optional<uint32_t> FileCrc32(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  uLong crc = crc32(0, nullptr, 0);
  unsigned char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return std::nullopt;
    }
    crc = crc32(crc, buffer, static_cast<uInt>(n));
  }
  close(fd);
  return static_cast<uint32_t>(crc);
}

std::optional<uint64_t> FileOffsetToVaddr(Elf* elf, uint64_t file_offset) {
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD) {
      continue;
    }
    if (file_offset >= phdr.p_offset && file_offset - phdr.p_offset < phdr.p_filesz) {
      return file_offset - phdr.p_offset + phdr.p_vaddr;
    }
  }
  return std::nullopt;
}

bool IsDebugOnlyFile(Elf* elf) {
  bool stripped_code = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || (shdr.sh_flags & SHF_EXECINSTR) == 0 ||
        shdr.sh_size == 0) {
      continue;
    }
    if (shdr.sh_type != SHT_NOBITS) return false;  // the code is there: a real binary
    stripped_code = true;
  }
  return stripped_code;
}

std::optional<uint64_t> MappedAddressToVaddr(Elf* elf, uint64_t address, uint64_t memory_start,
                                             uint64_t memory_limit, uint64_t page_size) {
  if (address < memory_start || page_size == 0 || (page_size & (page_size - 1)) != 0) {
    return std::nullopt;
  }
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return std::nullopt;
  const uint64_t length = memory_limit > memory_start ? memory_limit - memory_start : 0;
  std::optional<uint64_t> fit;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD ||
        (phdr.p_flags & PF_X) == 0 || phdr.p_memsz == 0) {
      continue;
    }
    // The loader maps [page_down(p_vaddr), page_up(p_vaddr + size)) of each segment; heaprec
    // records executable mappings only.
    const uint64_t start = phdr.p_vaddr & ~(page_size - 1);
    const uint64_t end = phdr.p_vaddr + phdr.p_memsz;
    const uint64_t span = ((end + page_size - 1) & ~(page_size - 1)) - start;
    const uint64_t vaddr = address - memory_start + start;
    if (vaddr < phdr.p_vaddr || vaddr >= end || length > span) continue;
    if (length == span) return vaddr;  // the whole segment: the best match among several
    if (!fit) fit = vaddr;
  }
  return fit;
}

}  // namespace heaprec::symbolize
