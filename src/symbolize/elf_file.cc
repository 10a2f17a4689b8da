// ELF build-id and program-header helpers, on top of libelf and libdwelf.
#include "symbolize/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

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

}  // namespace heaprec::symbolize
