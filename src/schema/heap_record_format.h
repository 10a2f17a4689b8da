// The heap record: the file that describes a process's sampled live heap at every instant, so
// that a process killed by SIGKILL or the OOM killer, which runs no code of heaprec's, still
// leaves a profile of the heap it died with, and of its peak. The preload library keeps it
// (preload/record/heap_record.h) as a shared file mapping, which the kernel writes back to the file
// after the process is gone; `heaprec recover` (and `heaprec run`, when its program is killed)
// turns it into pprof profiles (cli/heap_record_reader.h).
//
// Layout (all integers little-endian, as the machine writes them; offsets from the file's start):
//
//   Header            magic, version, the process, where its profile would have gone, and the
//                     words below, each one aligned 8-byte word written with one store
//   shard tables      kShards open-addressing tables of Slot (key -> sampled object), one per
//                     live-table shard; each published by one word, TableWord(offset, capacity)
//   node chunks       StackTable's trie, kNodeChunkNodes nodes per chunk, by node id
//   mapping log       the loaded objects (path, build id, executable range) frames fell in
//   peak copies       two areas of Slot, one per site (see PeakCopy); `peak_index` names the newest
//                     complete copy
//
// Crash consistency: the writer is killed between two stores, never inside one. A slot is filled
// before its key is stored, and emptied by storing a tombstone over its key; a table, a chunk,
// a mapping and a peak copy are complete before the word that publishes them is stored. So a
// reader sees every object live at death, except at most the one each thread was recording.
#pragma once

#include <cstddef>
#include <cstdint>

#include "schema/profile_schema.h"

namespace heaprec::record {

inline constexpr char kMagic[8] = {'H', 'E', 'A', 'P', 'R', 'E', 'C', 'R'};
// 2: a peak copy's slots are sites; 3: a table's offset is a multiple of 64, not 4096 (the first
// tables of all shards share a few pages); 4: the header ends with the attach's facts
// (RecordedAttach). A reader of 4 reads 2 and 3 as well, whose headers end before them.
inline constexpr std::uint32_t kVersion = 4;
inline constexpr std::uint32_t kOldestReadableVersion = 2;
// "dir/heaprec.123.record" beside "dir/heaprec.123.pb.gz": never a name a profile reader globs.
inline constexpr char kFileExtension[] = ".record";
// Under `heaprec run`, a process whose record ends parks the emptied file beside it as
// "dir/.heaprec-record-spare.N" (N below kSpareSlots), and the next process to start a record in
// that directory takes it over by renaming: a new inode per short process, and freeing it again,
// is what a make of a few hundred processes paid most for its records (docs/design/heap-record.md).
// `heaprec run` removes the spares when its program is done.
inline constexpr char kSparePrefix[] = ".heaprec-record-spare.";
inline constexpr int kSpareSlots = 8;

inline constexpr std::size_t kShards = 32;  // LiveTable::shard_count(), checked by the writer
inline constexpr std::size_t kNodeChunkNodes = 4096;
inline constexpr std::size_t kMaxNodeChunks = 16384;  // as StackTable: 67M nodes
inline constexpr std::size_t kMappingLogBytes = 1 << 20;
inline constexpr std::size_t kPathBytes = 4096;
inline constexpr std::size_t kBuildIdBytes = 41;
// Everything the writer may map: a record larger than this stops being kept (kIncomplete).
inline constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 30;

inline constexpr std::uint64_t kEmptyKey = 0;
inline constexpr std::uint64_t kTombstoneKey = ~std::uint64_t{0};

// A sampled object: HeapRecorder's key and LiveObject.
struct Slot {
  std::uint64_t key;  // kEmptyKey, kTombstoneKey, or the object's
  std::uint32_t stack;
  std::uint32_t generation;
  std::uint64_t size;
  double weight;
  std::uint64_t alloc_time_ns;
};
static_assert(sizeof(Slot) == 40);

struct Node {
  std::uint64_t frame;
  std::uint32_t parent;  // 0 at the root (node 1)
  std::uint32_t unused;
};
static_assert(sizeof(Node) == 16);

// One loaded object in the mapping log; entries follow each other, each `entry_bytes` long.
struct MappingEntry {
  std::uint32_t entry_bytes;  // a multiple of 8, header and path included
  std::uint32_t path_bytes;   // without the NUL
  std::uint64_t start, limit, file_offset;
  char build_id[kBuildIdBytes];  // lowercase hex, "" when none
  char padding[7];
  // followed by the path and a NUL
};
static_assert(sizeof(MappingEntry) == 80);

enum State : std::uint64_t {
  kRecording = 1,   // the process was keeping the record when it was last written
  kEnded = 2,       // the process wrote its final profile: the record says nothing more
  kIncomplete = 3,  // a change could not be stored (the file could not grow): not to be trusted
};

// The state word's low byte is the State. A process that reached its end but could not write its
// final profile (a full disk, a directory at its name) keeps its record, and the bits above say
// how it ended, so that the profile recovered from the record tells that ending, not a kill: the
// Ending (bits 8-15), the signal that ended it (16-23) and the write's errno (32-47).
inline constexpr std::uint64_t kStateBits = 0xff;
// An Ending is an index into kEndingReasons: the final profile's reason (schema/profile_schema.h);
// 0 for none seen (the process was killed without warning). Append only: the indices are in files.
inline constexpr const char* kEndingReasons[] = {"", schema::kReasonExit,
                                                 schema::kReasonUnderscoreExit,
                                                 schema::kReasonCrash, schema::kReasonTerminated};
inline constexpr std::uint64_t kEndingCount = sizeof(kEndingReasons) / sizeof(kEndingReasons[0]);
constexpr std::uint64_t WithEnding(std::uint64_t state, std::uint64_t ending, int signal_number,
                                   int error) {
  return (state & kStateBits) | ending << 8 |
         (static_cast<std::uint64_t>(signal_number) & 0xff) << 16 |
         (static_cast<std::uint64_t>(error) & 0xffff) << 32;
}
constexpr std::uint64_t EndingOf(std::uint64_t state) { return (state >> 8) & 0xff; }
constexpr int EndingSignal(std::uint64_t state) { return static_cast<int>((state >> 16) & 0xff); }
constexpr int EndingError(std::uint64_t state) { return static_cast<int>((state >> 32) & 0xffff); }

// A table: its offset (a multiple of kTableAlignment) with log2 of its slot count in the low bits.
inline constexpr std::uint64_t kTableAlignment = 64;
constexpr std::uint64_t TableWord(std::uint64_t offset, unsigned log2_capacity) {
  return offset | log2_capacity;
}
constexpr std::uint64_t TableOffset(std::uint64_t word) { return word & ~(kTableAlignment - 1); }
constexpr std::uint64_t TableCapacity(std::uint64_t word) {
  return word == 0 ? 0 : std::uint64_t{1} << (word & 63);
}

// A peak copy holds one Slot per (stack, size, generation) that had live objects: its key is how
// many sampled objects, its weight their sum and its alloc_time_ns the oldest one's (HeapSnapshot's
// kBySite).
struct PeakCopy {
  std::uint64_t area;  // file offset of `count` Slots
  std::uint64_t count;
  std::int64_t live_bytes;  // the recorder's estimate when copied
  std::uint64_t time_ns;    // CLOCK_REALTIME when copied
};

// What the profiles of a process heaprec attach loaded heaprec into say of the time before the
// attach (profile_schema.h, kHeldAtAttachField and the fields around it), for the heap at death
// to say it too. All zero in a process started under heaprec.
// RecordedAttach::held_at_attach of a process whose malloc is not glibc's: its heap is not known,
// and heap_in_use and unattributed mean nothing.
inline constexpr std::uint64_t kHeapNotKnown = ~std::uint64_t{0};

struct RecordedAttach {
  std::uint64_t attached_at_s;   // the attach, in Unix seconds
  std::uint64_t held_at_attach;  // glibc's bytes in use then; kHeapNotKnown: another allocator's
  std::uint64_t rss_at_attach;
  std::uint64_t heap_in_use;   // at the latest look (every 2 s)
  std::uint64_t unattributed;  // of those, what no sample since the attach accounts for
  std::uint64_t held_walked;
  char held_by_size[320];  // "CLASS:BYTES:BLOCKS,...", "" when not read
};

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;  // sizeof(Header)
  std::uint64_t pid;
  std::uint64_t start_time_ns;    // CLOCK_REALTIME when the process started
  std::uint64_t sample_interval;  // bytes between samples on average
  char profile_path[kPathBytes];  // where the final profile would have been written
  char program[128];
  // The words the writer updates as it goes.
  std::uint64_t state;               // State, and the Ending bits (WithEnding)
  std::uint64_t file_bytes;          // bytes of the file in use; never read past
  std::uint64_t mapping_log_offset;  // the log's area (kMappingLogBytes long)
  std::uint64_t mapping_log_bytes;   // bytes of complete entries
  std::uint64_t peak_index;  // which of `peaks` is the newest complete copy, 0 or 1; 2: none
  PeakCopy peaks[2];
  std::uint64_t shard_tables[kShards];
  std::uint64_t node_chunks[kMaxNodeChunks];  // file offsets, 0 for none
  RecordedAttach attach;                      // since version 4; updated as the process runs
};

// A version 2 or 3 header's size: it ends where `attach` begins.
inline constexpr std::size_t kHeaderBytesBefore4 = offsetof(Header, attach);

}  // namespace heaprec::record
