// The GNU build id in a block of ELF notes (a PT_NOTE segment in memory, a SHT_NOTE section read
// from a file), as lowercase hex. A pure function of the bytes: no allocation, safe on any input.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace heaprec::preload {

// Writes the NT_GNU_BUILD_ID note's bytes as hex and a NUL into `hex_out` (41 bytes: ids of up to
// 20 bytes); false when `notes` holds none. `notes` must be 4-byte aligned.
inline bool BuildIdHex(const char* notes, std::size_t size, char* hex_out) {
  std::size_t at = 0;
  while (at <= size && size - at >= sizeof(Elf64_Nhdr)) {
    Elf64_Nhdr note;
    std::memcpy(&note, notes + at, sizeof(note));
    const std::uint64_t name_bytes = (static_cast<std::uint64_t>(note.n_namesz) + 3) & ~3ull;
    const std::uint64_t desc_bytes = (static_cast<std::uint64_t>(note.n_descsz) + 3) & ~3ull;
    const std::uint64_t rest = size - at - sizeof(Elf64_Nhdr);
    if (name_bytes > rest || desc_bytes > rest - name_bytes) return false;
    const char* name = notes + at + sizeof(Elf64_Nhdr);
    const char* desc = name + name_bytes;
    if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
        note.n_descsz <= 20) {
      static const char kDigits[] = "0123456789abcdef";
      for (std::uint32_t b = 0; b < note.n_descsz; ++b) {
        auto byte = static_cast<unsigned char>(desc[b]);
        hex_out[2 * b] = kDigits[byte >> 4];
        hex_out[2 * b + 1] = kDigits[byte & 15];
      }
      hex_out[2 * note.n_descsz] = '\0';
      return true;
    }
    at += sizeof(Elf64_Nhdr) + name_bytes + desc_bytes;
  }
  return false;
}

}  // namespace heaprec::preload
