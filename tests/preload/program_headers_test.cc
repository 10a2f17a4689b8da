// ReadProgramHeaders on made-up images: the one read that serves the ELF header, the program
// headers and the build-id note when they sit at the object's start, and the reads of their own
// for whatever lies elsewhere, each checked by what it finds and by how many reads it took.
#include "preload/objects/program_headers.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace heaprec::preload {
namespace {

constexpr std::uintptr_t kMapStart = 0x7f0000010000;
constexpr std::uint64_t kPage = 4096;
const unsigned char kBuildId[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                                  0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
constexpr char kBuildIdHex[] = "deadbeef0123456789abcdef1032547698badcfe";

// An object's memory as the loader would have mapped it at kMapStart (load bias kMapStart): an
// ELF header, program headers at `phoff` (an executable PT_LOAD and a PT_NOTE), and a GNU
// build-id note at `note_at`.
struct Image {
  std::vector<unsigned char> memory;
  int reads = 0;
  std::size_t longest_read_allowed = SIZE_MAX;  // longer reads fail, as past a mapping's end

  Image(std::size_t bytes, std::size_t phoff, std::size_t note_at) : memory(bytes, 0) {
    ElfW(Ehdr) ehdr = {};
    std::memcpy(ehdr.e_ident, ELFMAG, SELFMAG);
    ehdr.e_phoff = phoff;
    ehdr.e_phentsize = sizeof(ElfW(Phdr));
    ehdr.e_phnum = 2;
    std::memcpy(memory.data(), &ehdr, sizeof(ehdr));
    ElfW(Nhdr) note = {4, sizeof(kBuildId), NT_GNU_BUILD_ID};
    std::memcpy(memory.data() + note_at, &note, sizeof(note));
    std::memcpy(memory.data() + note_at + sizeof(note), "GNU", 4);
    std::memcpy(memory.data() + note_at + sizeof(note) + 4, kBuildId, sizeof(kBuildId));
    ElfW(Phdr) phdrs[2] = {};
    phdrs[0].p_type = PT_LOAD;
    phdrs[0].p_flags = PF_R | PF_X;
    phdrs[0].p_vaddr = 0x1000;
    phdrs[0].p_offset = 0x1000;
    phdrs[0].p_memsz = 0x800;
    phdrs[1].p_type = PT_NOTE;
    phdrs[1].p_vaddr = note_at;
    phdrs[1].p_memsz = sizeof(note) + 4 + sizeof(kBuildId);
    std::memcpy(memory.data() + phoff, phdrs, sizeof(phdrs));
  }

  bool Read(void* to, std::uintptr_t from, std::size_t bytes) {
    ++reads;
    if (bytes > longest_read_allowed || from < kMapStart || from - kMapStart > memory.size() ||
        bytes > memory.size() - (from - kMapStart)) {
      return false;
    }
    std::memcpy(to, memory.data() + (from - kMapStart), bytes);
    return true;
  }

  bool Describe(LoadedObject* out) {
    out->base = kMapStart;
    out->map_start = kMapStart;
    out->map_end = kMapStart + memory.size();
    return ReadProgramHeaders(out, kPage, [this](void* to, std::uintptr_t from, std::size_t n) {
      return Read(to, from, n);
    });
  }
};

void ExpectDescribed(const LoadedObject& object) {
  EXPECT_STREQ(object.build_id, kBuildIdHex);
  ASSERT_EQ(object.segment_count, 1);
  EXPECT_EQ(object.segments[0].start, kMapStart + 0x1000);
  EXPECT_EQ(object.segments[0].limit, kMapStart + 0x2000);
  EXPECT_EQ(object.segments[0].file_offset, 0x1000u);
}

TEST(ProgramHeadersTest, EachLayoutIsDescribedInTheReadsItNeeds) {
  struct Layout {
    const char* what;
    std::size_t bytes, phoff, note_at;
    int reads;
  };
  const Layout layouts[] = {
      {"headers and note at the start: one read", 0x3000, sizeof(ElfW(Ehdr)), 0x300, 1},
      {"a mapping shorter than the first read, read whole", 0x800, sizeof(ElfW(Ehdr)), 0x300, 1},
      {"a note beyond the first read, read on its own", 0x3000, sizeof(ElfW(Ehdr)), 0x2000, 2},
      // Read into place, they overwrite what the first read brought: the note, inside that range,
      // is read again from the object rather than taken from the overwritten copy.
      {"program headers elsewhere, read into place", 0x3000, 0x2800, 0x100, 3},
  };
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(layout.what);
    Image image(layout.bytes, layout.phoff, layout.note_at);
    LoadedObject object;
    ASSERT_TRUE(image.Describe(&object));
    ExpectDescribed(object);
    EXPECT_EQ(image.reads, layout.reads);
  }
}

TEST(ProgramHeadersTest, AFailedFirstReadFallsBackToTheHeaderAlone) {
  Image image(0x3000, sizeof(ElfW(Ehdr)), 0x300);
  image.longest_read_allowed = 1024;  // the ELF header, the program headers, the note: each fits
  LoadedObject object;
  ASSERT_TRUE(image.Describe(&object));
  ExpectDescribed(object);
  EXPECT_EQ(image.reads, 4);  // the failed read, the header, the program headers, the note
}

TEST(ProgramHeadersTest, WhatIsNotAnElfObjectIsNotDescribed) {
  Image image(0x3000, sizeof(ElfW(Ehdr)), 0x300);
  image.memory[1] = 'X';
  LoadedObject object;
  EXPECT_FALSE(image.Describe(&object));
  Image tiny(0x3000, sizeof(ElfW(Ehdr)), 0x300);
  tiny.memory.resize(32);  // shorter than an ELF header: nothing is read
  EXPECT_FALSE(tiny.Describe(&object));
  EXPECT_EQ(tiny.reads, 0);
}

TEST(ProgramHeadersTest, ProgramHeadersPastTheMappingAreRefused) {
  Image image(0x3000, sizeof(ElfW(Ehdr)), 0x300);
  ElfW(Ehdr) ehdr;
  std::memcpy(&ehdr, image.memory.data(), sizeof(ehdr));
  ehdr.e_phoff = ~std::uint64_t{0} - 8;  // would wrap round in a sum
  std::memcpy(image.memory.data(), &ehdr, sizeof(ehdr));
  LoadedObject object;
  EXPECT_FALSE(image.Describe(&object));
}

}  // namespace
}  // namespace heaprec::preload
