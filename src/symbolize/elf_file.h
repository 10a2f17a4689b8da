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

// What the symbolizer's search (file_search.h) needs to know of a candidate file.
struct ElfFacts {
  bool readable = false;  // a regular file that could be opened
  bool elf = false;       // and is an ELF file
  std::string build_id;   // as ElfBuildId
  bool dwarf = false;     // has a .debug_info section with contents (HasDwarf)
  std::string debuglink;  // the .gnu_debuglink file name, "" when none
  uint32_t debuglink_crc = 0;
};

// Reads the facts of the file at `path`. A FIFO or device is never opened: a profile can name
// anything, and opening one could block.
ElfFacts ReadElfFacts(const std::string& path);

// Whether the file has DWARF of its own: a .debug_info (or compressed .zdebug_info) section that
// is not SHT_NOBITS. A stripped binary has none; its separate debug file has.
bool HasDwarf(Elf* elf);

// The CRC-32 that .gnu_debuglink records for the debug file at `path` (zlib's crc32 over the
// whole file), nullopt when it cannot be read.
std::optional<uint32_t> FileCrc32(const std::string& path);

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
