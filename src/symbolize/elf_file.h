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

// True for a separate debug file as `objcopy --only-keep-debug` (and so dh_strip, rpm's
// find-debuginfo) writes it: its code sections are SHT_NOBITS, and its PT_LOAD headers keep the
// binary's addresses and memory sizes but not its file offsets and sizes, so FileOffsetToVaddr
// cannot be used on it.
bool IsDebugOnlyFile(Elf* elf);

// For a debug-only file: the virtual address of `address`, which lies in the executable mapping
// [memory_start, memory_limit) of the original binary. Without the binary's file offsets, the
// mapping is taken to begin where the loader mapped an executable PT_LOAD segment, at its
// page-aligned start (as it does unless the process remapped part of its code), with pages of
// `page_size` bytes. nullopt when no executable segment contains the result.
std::optional<uint64_t> MappedAddressToVaddr(Elf* elf, uint64_t address, uint64_t memory_start,
                                             uint64_t memory_limit, uint64_t page_size);

}  // namespace heaprec::symbolize
