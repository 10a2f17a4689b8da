#include "preload/objects/own_image.h"

#include <link.h>

extern "C" const ElfW(Ehdr) __ehdr_start;  // heaprec's own ELF header, defined by the linker

namespace heaprec::preload {

AddressRange OwnLoadedRange(std::uint32_t flags) {
  const ElfW(Ehdr)* ehdr = &__ehdr_start;
  auto base = reinterpret_cast<std::uintptr_t>(ehdr);
  auto* phdrs = reinterpret_cast<const ElfW(Phdr)*>(base + ehdr->e_phoff);
  AddressRange range;
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    const ElfW(Phdr)& ph = phdrs[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & flags) != flags) continue;
    std::uintptr_t low = base + ph.p_vaddr, high = low + ph.p_memsz;
    if (range.high == 0 || low < range.low) range.low = low;
    if (high > range.high) range.high = high;
  }
  return range;
}

}  // namespace heaprec::preload
