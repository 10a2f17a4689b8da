// Function names from an ELF file's symbol tables (.symtab, else .dynsym), for the HTTP endpoint's
// /debug/pprof/symbol (symbol_server.h), inside the profiled process.
//
// The file is read with pread only, never mapped: a file truncated or rewritten while it is read
// gives short reads (no names), where a mapping would raise SIGBUS in someone else's process.
// Every offset, size and count read from the file is checked against the file's size and against
// fixed limits before use, so a malformed or truncated ELF file gives no names, never a crash or an
// unbounded read. No allocation: the caller owns every buffer. Only 64-bit ELF files of this
// machine's byte order are read (what the process can have loaded).
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

// The symbol found for one address: the smallest function symbol containing it.
struct SymbolMatch {
  bool found = false;
  std::uint32_t table = 0;        // SHT_SYMTAB or SHT_DYNSYM: which table named it
  std::uint64_t start = 0;        // the symbol's st_value
  std::uint64_t size = 0;         // the symbol's st_size (to keep the smallest)
  std::uint64_t name_offset = 0;  // where its name starts in the file
  std::uint64_t name_limit = 0;   // where its string table ends in the file
};

class ElfSymbolFile {
 public:
  // Symbols read from one table at most (a 400 MiB .symtab): a bound on the time a request takes.
  static constexpr std::uint64_t kMaxSymbols = 1ull << 24;

  // Reads the ELF header of the file open on `fd`. False when it is not an ELF file this process
  // could have loaded, or its section headers lie outside the file.
  bool Open(int fd);

  // The GNU build id from the file's SHT_NOTE sections, as hex into `hex` (41 bytes); "" when the
  // file has none.
  void BuildId(char* hex) const;
  // Whether the file's build id is `build_id` (hex); any file is when `build_id` is "" (nothing to
  // compare with).
  bool HasBuildId(const char* build_id) const;

  // The PT_LOAD segment whose file bytes hold `offset`: where its bytes start in the file, how
  // many, and the virtual address of the first. False when no segment holds it.
  struct LoadSegment {
    std::uint64_t offset, size, vaddr;
  };
  bool SegmentAt(std::uint64_t offset, LoadSegment* out) const;

  // For each of `count` virtual addresses, sorted in ascending order, the smallest function
  // symbol (STT_FUNC, STT_GNU_IFUNC) of .symtab containing it, else of .dynsym. `matches` has
  // `count` entries, reset here.
  void Match(const std::uint64_t* vaddrs, std::size_t count, SymbolMatch* matches) const;

  // The match's name, NUL-terminated, cut to `capacity` - 1 bytes, control characters (a newline
  // would end the answer's line) replaced with '?'. False when it cannot be read.
  bool Name(const SymbolMatch& match, char* out, std::size_t capacity) const;

 private:
  bool Section(std::uint32_t index, Elf64_Shdr* out) const;
  // Whether [offset, offset + size) lies within the file.
  bool Within(std::uint64_t offset, std::uint64_t size) const;
  void MatchTable(std::uint32_t type, const std::uint64_t* vaddrs, std::size_t count,
                  SymbolMatch* matches) const;

  int fd_ = -1;
  std::uint64_t file_size_ = 0;
  std::uint64_t section_offset_ = 0;
  std::uint32_t section_count_ = 0;
  std::uint64_t segment_offset_ = 0;  // the program headers
  std::uint32_t segment_count_ = 0;
};

}  // namespace heaprec::preload
