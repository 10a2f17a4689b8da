#include "preload/elf_notes.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace heaprec::preload {

bool GnuBuildIdHex(const dl_phdr_info* info, char* hex_out) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      const char* next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && note->n_descsz <= 20) {
        static const char kDigits[] = "0123456789abcdef";
        for (std::uint32_t b = 0; b < note->n_descsz; ++b) {
          auto byte = static_cast<unsigned char>(desc[b]);
          hex_out[2 * b] = kDigits[byte >> 4];
          hex_out[2 * b + 1] = kDigits[byte & 15];
        }
        hex_out[2 * note->n_descsz] = '\0';
        return true;
      }
      p = next;
    }
  }
  return false;
}

}  // namespace heaprec::preload
