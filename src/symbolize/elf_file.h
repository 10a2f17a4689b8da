// Small ELF helpers for the symbolizer: GNU build ids and translating file offsets (what a
// /proc/pid/maps mapping gives) into ELF virtual addresses (what symbol and DWARF tables use).
#pragma once

#include <libelf.h>

#include <cstdint>
#include <optional>
#include <string>

namespace heaprec::symbolize {

// Lowercase hex of the GNU build-id note, or "" when there is none.
std::string ElfBuildId(Elf* elf);

// Same, for the file at `path`; "" also when the file cannot be read as ELF.
std::string ReadElfBuildId(const std::string& path);

// Maps `file_offset` to a virtual address through the PT_LOAD segment that contains it.
std::optional<uint64_t> FileOffsetToVaddr(Elf* elf, uint64_t file_offset);

}  // namespace heaprec::symbolize
