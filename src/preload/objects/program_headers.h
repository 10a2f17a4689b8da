// What an object's program headers say about it (its executable segments, its GNU build id), read
// from the memory the loader mapped it to. Header-only, a template over how memory is read, so
// that its paths can be tested on made-up images (tests/preload/program_headers_test.cc); the
// preload library reads through the kernel (unwind/own_memory.h). No allocation, no locks.
#pragma once

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "preload/objects/build_id_note.h"
#include "preload/objects/loaded_objects.h"

namespace heaprec::preload {

// Fills in out->segments and out->build_id from the headers of the object mapped at
// [out->map_start, out->map_end) with load bias out->base; false when they cannot be read or
// describe no executable segment. `read(void* to, std::uintptr_t from, std::size_t bytes)` copies
// memory and says whether all of it was there.
//
// The loader maps an object's first segment from file offset 0, so its ELF header, and normally
// its program headers, sit at map_start. Each read costs the preload library two system calls
// (the pid, then the copy), and a short-lived process describes every object its samples fell
// in: one read of the object's start serves the ELF header, the program headers and, in most
// objects, the build-id note, which sit there too. What lies elsewhere is read on its own.
template <typename Read>
bool ReadProgramHeaders(LoadedObject* out, std::uint64_t page, Read&& read) {
  constexpr int kMaxProgramHeaders = 64;
  constexpr std::size_t kMaxNoteBytes = 1024;
  struct Head {
    ElfW(Ehdr) ehdr;
    ElfW(Phdr) phdrs[kMaxProgramHeaders];  // where they normally are: right after the ELF header
  } head;
  const std::uintptr_t mapped = out->map_end - out->map_start;
  const std::size_t head_bytes = mapped < sizeof(head) ? mapped : sizeof(head);
  // Whether `head` holds the object's first head_bytes as they are in memory, where the note may
  // be found too. A first read that fails (an object's first page cut short) leaves the ELF header
  // to a read of its own.
  bool head_is_memory = head_bytes >= sizeof(head.ehdr) && read(&head, out->map_start, head_bytes);
  if (!head_is_memory &&
      (mapped < sizeof(head.ehdr) || !read(&head.ehdr, out->map_start, sizeof(head.ehdr)))) {
    return false;
  }
  const ElfW(Ehdr)& ehdr = head.ehdr;
  const std::size_t phdr_bytes = ehdr.e_phnum * sizeof(ElfW(Phdr));
  if (std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_phentsize != sizeof(ElfW(Phdr)) ||
      ehdr.e_phnum > kMaxProgramHeaders || ehdr.e_phoff > mapped ||
      phdr_bytes > mapped - ehdr.e_phoff) {
    return false;
  }
  // Anywhere else, or not read yet: read them into place (the bytes past the header are then no
  // longer the object's, and serve no note).
  if (!head_is_memory || ehdr.e_phoff != sizeof(ehdr)) {
    head_is_memory = false;
    if (!read(head.phdrs, out->map_start + ehdr.e_phoff, phdr_bytes)) return false;
  }
  const auto* head_memory = reinterpret_cast<const char*>(&head);
  out->segment_count = 0;
  out->build_id[0] = '\0';
  for (int i = 0; i < ehdr.e_phnum; ++i) {
    const ElfW(Phdr)& ph = head.phdrs[i];
    if (ph.p_type == PT_NOTE && out->build_id[0] == '\0') {
      const std::size_t size = ph.p_memsz < kMaxNoteBytes ? ph.p_memsz : kMaxNoteBytes;
      const std::uintptr_t at = out->base + ph.p_vaddr;
      if (head_is_memory && at >= out->map_start && at - out->map_start <= head_bytes &&
          size <= head_bytes - (at - out->map_start)) {
        BuildIdHex(head_memory + (at - out->map_start), size, out->build_id);
      } else {
        alignas(ElfW(Nhdr)) char notes[kMaxNoteBytes];
        if (read(notes, at, size)) BuildIdHex(notes, size, out->build_id);
      }
    }
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 ||
        out->segment_count == LoadedObject::kMaxSegments) {
      continue;
    }
    std::uint64_t start = (out->base + ph.p_vaddr) & ~(page - 1);
    std::uint64_t limit = (out->base + ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1);
    out->segments[out->segment_count++] = {start, limit, ph.p_offset & ~(page - 1)};
  }
  return out->segment_count > 0;
}

}  // namespace heaprec::preload
