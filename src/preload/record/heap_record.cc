#include "preload/record/heap_record.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "core/appender.h"
#include "core/hash.h"
#include "core/live_set_observer.h"
#include "core/manifest_writer.h"
#include "core/mutex.h"
#include "core/own_descriptors.h"
#include "core/prefault.h"
#include "preload/attach/dormant.h"
#include "preload/attach/injected.h"
#include "preload/control/settings.h"
#include "preload/dump/dump_thread.h"
#include "preload/dump/profile_writer.h"
#include "preload/objects/loaded_objects.h"
#include "preload/process/own_process.h"
#include "preload/state.h"
#include "schema/heap_record_format.h"
#include "schema/manifest.h"

namespace heaprec::preload {
namespace {

using record::Header;
using record::Node;
using record::Slot;

constexpr std::size_t kPage = 4096;
constexpr std::size_t RoundToPages(std::size_t bytes) { return (bytes + kPage - 1) & ~(kPage - 1); }
constexpr std::size_t kHeaderBytes = RoundToPages(sizeof(Header));
// The first table of every shard is small, and all of them share a few pages: each page of the
// record a process first writes costs a fault on a shared file mapping, and a process with a few
// dozen live samples, spread over the 32 shards, used to touch a page or two per shard. A shard
// outgrowing its first table moves to a table of its own, page-aligned, as before.
constexpr std::size_t kFirstTableSlots = 16;  // 640 B a shard, 20 KiB in all
constexpr std::size_t kFirstTablesBytes = record::kShards * kFirstTableSlots * sizeof(Slot);
static_assert(kFirstTableSlots * sizeof(Slot) % record::kTableAlignment == 0);
constexpr std::size_t kNodeChunkBytes = record::kNodeChunkNodes * sizeof(Node);
// The file's first reservation holds what every record needs: the header, the mapping log, the
// first tables, the first node chunk and room for the first peak copies. A small process then
// makes one reservation and one mapping.
constexpr std::size_t kFirstPeakBytes = 64 * 1024;
constexpr std::size_t kFirstSegmentBytes = kHeaderBytes + record::kMappingLogBytes +
                                           RoundToPages(kFirstTablesBytes) + kNodeChunkBytes +
                                           kFirstPeakBytes;
constexpr std::size_t kMaxSegments = 64;
constexpr std::size_t kMaxRanges = 256;  // loaded objects already in the mapping log
static_assert(LiveTable::shard_count() == record::kShards, "one table per live-table shard");

// A key stored after the slot's other fields, with one store: a reader of the file after death sees
// the slot whole or not at all.
void PublishKey(Slot& slot, std::uint64_t key) {
  __atomic_store_n(&slot.key, key, __ATOMIC_RELEASE);
}
void PublishWord(std::uint64_t& word, std::uint64_t value) {
  __atomic_store_n(&word, value, __ATOMIC_RELEASE);
}
// Replaces the bits of `word` outside `keep` with `value`'s, in one store: the state word's State
// and Ending bits are set by different threads (an allocation that finds the file full, the final
// dump that could not write), and neither may undo the other.
void PublishBits(std::uint64_t& word, std::uint64_t keep, std::uint64_t value) {
  std::uint64_t old = __atomic_load_n(&word, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&word, &old, (old & keep) | (value & ~keep), false,
                                      __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
}

// Maps `bytes` of the record file at `offset`, shared. Without readahead: a write fault on a page
// not yet in the page cache otherwise reads ahead the pages after it (zeros, for reserved blocks),
// allocating and clearing up to a window of them, where the record writes a few scattered words.
// That made each first touch of a page cost about twice as much, and removing the file after it.
void* MapRecord(int fd, std::uint64_t offset, std::size_t bytes) {
  void* base =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (base != MAP_FAILED) madvise(base, bytes, MADV_RANDOM);
  return base;
}

unsigned Log2(std::size_t power_of_two) {
  return static_cast<unsigned>(__builtin_ctzll(power_of_two));
}

// "dir/name.123.record" -> "dir/.heaprec-record-spare.N": a spare lives in its record's directory,
// so that taking it over or parking it is one rename.
bool SparePath(const char* record_path, int slot, char* out, std::size_t capacity) {
  const char* slash = strrchr(record_path, '/');
  Appender path(out, capacity);
  if (slash != nullptr) path.Add(record_path, static_cast<std::size_t>(slash - record_path) + 1);
  path.Add(record::kSparePrefix);
  path.AddUnsigned(static_cast<unsigned long long>(slot), 1);
  return path.Finish();
}

// Spares are kept only under `heaprec run`, which removes them when its program is done: the run's
// manifest still being there says it is not done yet. (A process that outlives the run, parking
// its file just as the run ends, can still leave one: an empty hidden file.)
bool KeepsSpares() {
  return g_settings.manifest[0] != '\0' && access(g_settings.manifest, F_OK) == 0;
}

// Takes over a spare of `path`'s directory under the name `path`, opened into *file. Whatever the
// rename brought is checked through the descriptor: only an empty regular file of this user that
// no other name links is used (a parked file is always empty; one that is not may be another
// process's live record, renamed by a process that shared its name, and must never be truncated
// under its mapping); anything else loses its new name again (a symlink's target, or a hard link's
// other names, are never touched) and the next slot is tried.
bool ClaimSpare(const char* path, OwnFile* file) {
  char spare[PATH_MAX];
  for (int slot = 0; slot < record::kSpareSlots; ++slot) {
    if (!SparePath(path, slot, spare, sizeof(spare))) return false;
    if (renameat2(AT_FDCWD, spare, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
      if (errno == ENOENT) continue;  // none in this slot, or another process took it first
      return false;                   // `path` exists (a leftover), or renames fail here
    }
    struct stat status;
    if (OpenOwnFile(path, O_RDWR | O_NOFOLLOW, 0, file)) {
      if (fstat(file->fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_uid == geteuid() &&
          status.st_nlink == 1 && status.st_size == 0) {
        return true;
      }
      CloseOwnFile(file);
    }
    unlink(path);
  }
  return false;
}

class HeapRecordWriter final : public LiveSetObserver {
 public:
  // Makes the file (or takes over a spare) and maps its header; false (and nothing left behind)
  // on any failure.
  bool Create(const char* path, std::uint64_t sample_interval);
  // Marks the record ended, unmaps it and parks its file as a spare or removes it. Nothing may
  // write the record any more: the recorder no longer tells it anything and the caller holds the
  // peak capture's lock.
  void End();
  // The mappings go, without a store (in a fork child: they are the parent's file).
  void Unmap();
  // The process ended as `ending` says but its final profile could not be written: the record
  // stays, and says so (record::WithEnding), keeping its State (it may be kIncomplete).
  void MarkEnding(std::uint64_t ending, int signal_number, int error);

  ~HeapRecordWriter();

  void ObjectAdded(std::size_t shard, std::uint64_t key, const LiveObject& object) override;
  void ObjectRemoved(std::size_t shard, std::uint64_t key) override;
  void NodeCreated(StackId id, StackId parent, std::uint64_t frame) override;
  void CopyPeak(const HeapSnapshot& snapshot, std::int64_t live_bytes, std::uint64_t time_ns);

  // Whether the file goes on receiving the peak copies: made, not ended, never out of space.
  bool KeepsPeaks() const { return !Broken() && !ended_.load(std::memory_order_relaxed); }
  // The attach's facts in the header, for the heap at death (under the dump's lock).
  void NoteAttach(const record::RecordedAttach& attach) {
    if (header_ != nullptr) header_->attach = attach;
  }

  Mutex& space_lock() { return space_lock_; }
  std::uint64_t MappedBytes() {
    MutexLock lock(space_lock_);
    return mapped_end_;
  }

 private:
  struct Table {
    Slot* slots = nullptr;
    std::size_t capacity = 0;  // a power of two
    std::size_t used = 0;
  };
  struct Segment {
    unsigned char* base;
    std::uint64_t offset, bytes;
  };
  struct Area {
    Slot* slots = nullptr;
    std::uint64_t offset = 0;
    std::size_t capacity = 0;
  };
  struct Range {
    std::uintptr_t start, limit;
  };

  // Room for `bytes` (rounded to pages) in the file, zero-filled and backed by disk blocks: its
  // offset and *where, or 0 when the file cannot grow (the record is then kIncomplete).
  std::uint64_t Reserve(std::size_t bytes, void** where);
  bool MapMore(std::size_t at_least);
  void MarkIncomplete();
  bool Broken() const { return broken_.load(std::memory_order_relaxed); }
  bool GrowTable(std::size_t shard);
  bool ParkFile();
  bool ReopenOwnFile(OwnFile* file);
  static void Put(Table& table, std::uint64_t key, const LiveObject& object);
  void NoteMapping(std::uint64_t frame);
  void AppendMapping(std::uint64_t start, std::uint64_t limit, std::uint64_t file_offset);

  char path_[PATH_MAX] = {};
  dev_t device_ = 0;
  ino_t inode_ = 0;
  Header* header_ = nullptr;
  std::atomic<bool> broken_{false};
  std::atomic<bool> ended_{false};
  Mutex space_lock_;  // guards the segments and file_bytes; taken after any recorder lock
  Segment segments_[kMaxSegments] = {};
  std::size_t segment_count_ = 0;
  std::uint64_t file_bytes_ = 0;   // reserved so far
  std::uint64_t mapped_end_ = 0;   // the file's mapped (and allocated) length
  Table tables_[record::kShards];  // each under its live-table shard's lock
  Slot* first_tables_ = nullptr;   // kShards tables of kFirstTableSlots
  std::uint64_t first_tables_offset_ = 0;
  // Under the stack lock. kMaxNodeChunks pointers from the arena, zero from the kernel: only the
  // page of the chunks in use is ever touched (a member array was 128 KiB to clear per process).
  Node** node_chunks_ = nullptr;
  Range ranges_[kMaxRanges] = {};  // under the stack lock
  std::size_t range_count_ = 0;
  unsigned char* mapping_log_ = nullptr;
  LoadedObject object_ = {};  // scratch for NoteMapping, under the stack lock
  Area peak_areas_[2];        // under the peak capture lock
};

alignas(HeapRecordWriter) unsigned char g_writer_storage[sizeof(HeapRecordWriter)];
// Set by the dump thread under the dump's lock, once the file is made; read by the peak capture.
// Never freed but in a fork child, alone.
std::atomic<HeapRecordWriter*> g_writer{nullptr};
HeapRecorder* g_observed = nullptr;  // the recorder g_writer observes
bool g_tried = false;                // under the dump's lock: one attempt per process

bool HeapRecordWriter::Create(const char* path, std::uint64_t sample_interval) {
  std::size_t length = strlen(path);
  if (length >= sizeof(path_) || length >= record::kPathBytes) return false;
  memcpy(path_, path, length + 1);
  OwnFile file;
  // A leftover of this pid can only be of a process that is gone (this one has the pid now).
  if (!(KeepsSpares() && ClaimSpare(path_, &file)) &&
      !OpenOwnFile(path_, O_RDWR | O_CREAT | O_EXCL, 0600, &file)) {
    if (errno != EEXIST || unlink(path_) != 0) return false;
    if (!OpenOwnFile(path_, O_RDWR | O_CREAT | O_EXCL, 0600, &file)) return false;
  }
  device_ = file.device;
  inode_ = file.inode;
  const std::size_t first = kFirstSegmentBytes;
  void* base = MAP_FAILED;
  node_chunks_ = g_arena->AllocateZeroedArray<Node*>(record::kMaxNodeChunks);
  if (node_chunks_ != nullptr && posix_fallocate(file.fd, 0, static_cast<off_t>(first)) == 0) {
    base = MapRecord(file.fd, 0, first);
  }
  CloseOwnFile(&file);
  if (base == MAP_FAILED) {
    unlink(path_);
    return false;
  }
  segments_[0] = {static_cast<unsigned char*>(base), 0, first};
  segment_count_ = 1;
  mapped_end_ = first;
  file_bytes_ = kHeaderBytes;
  header_ = static_cast<Header*>(base);
  memcpy(header_->magic, record::kMagic, sizeof(record::kMagic));
  header_->version = record::kVersion;
  header_->header_bytes = sizeof(Header);
  header_->pid = static_cast<std::uint64_t>(getpid());
  header_->start_time_ns = NowNs(CLOCK_REALTIME);
  header_->sample_interval = sample_interval;
  char profile[PATH_MAX];
  if (ExpandProfileName(0, profile, sizeof(profile))) {
    memcpy(header_->profile_path, profile, strnlen(profile, record::kPathBytes - 1));
  }
  memcpy(header_->program, ProgramName(), strnlen(ProgramName(), sizeof(header_->program) - 1));
  header_->peak_index = 2;
  void* log = nullptr;
  header_->mapping_log_offset = Reserve(record::kMappingLogBytes, &log);
  mapping_log_ = static_cast<unsigned char*>(log);
  void* tables = nullptr;
  first_tables_offset_ = Reserve(kFirstTablesBytes, &tables);
  first_tables_ = static_cast<Slot*>(tables);
  header_->file_bytes = file_bytes_;
  PublishWord(header_->state, record::kRecording);
  return true;
}

HeapRecordWriter::~HeapRecordWriter() {
  g_arena->DeallocateArray(node_chunks_, record::kMaxNodeChunks);
}

void HeapRecordWriter::End() {
  if (header_ == nullptr) return;  // ended already, before an exec that failed
  ended_.store(true, std::memory_order_relaxed);
  PublishWord(header_->state, record::kEnded);  // killed before the file goes: recovery skips it
  Unmap();
  if (!(KeepsSpares() && ParkFile())) unlink(path_);
}

// The file, still ours, emptied (its blocks and dirty pages go now, as its removal would have let
// them go) and renamed to a free spare slot. Emptied first: once renamed, another process may take
// it over and map it at once, and a truncation after that would pull its pages away (SIGBUS). A
// process killed in between leaves an empty record, which recovery knows holds nothing.
bool HeapRecordWriter::ParkFile() {
  OwnFile file;
  if (!ReopenOwnFile(&file)) return false;
  bool parked = false;
  char spare[PATH_MAX];
  if (ftruncate(file.fd, 0) == 0) {
    for (int slot = 0; slot < record::kSpareSlots && !parked; ++slot) {
      if (!SparePath(path_, slot, spare, sizeof(spare))) break;
      parked = renameat2(AT_FDCWD, path_, AT_FDCWD, spare, RENAME_NOREPLACE) == 0;
      if (!parked && errno != EEXIST) break;
    }
  }
  CloseOwnFile(&file);
  return parked;
}

// No descriptor stays open between uses: the file is opened again by name, and used only if it is
// still the one this writer made (or took over).
bool HeapRecordWriter::ReopenOwnFile(OwnFile* file) {
  if (!OpenOwnFile(path_, O_RDWR | O_NOFOLLOW, 0, file)) return false;
  if (file->device == device_ && file->inode == inode_) return true;
  CloseOwnFile(file);
  return false;
}

void HeapRecordWriter::Unmap() {
  for (std::size_t i = 0; i < segment_count_; ++i) munmap(segments_[i].base, segments_[i].bytes);
  segment_count_ = 0;
  header_ = nullptr;
}

void HeapRecordWriter::MarkEnding(std::uint64_t ending, int signal_number, int error) {
  if (header_ == nullptr) return;
  PublishBits(header_->state, record::kStateBits,
              record::WithEnding(0, ending, signal_number, error));
}

void HeapRecordWriter::MarkIncomplete() {
  if (broken_.exchange(true)) return;
  PublishBits(header_->state, ~record::kStateBits, record::kIncomplete);
  WakeDumpThread();  // the peak copies are no longer kept here: the peak profile is written now
}

// Maps at least `at_least` more bytes of the file after the last segment, reserving their disk
// blocks first: a page of a shared file mapping with no block behind it raises SIGBUS when the disk
// is full. The file is opened again by name (ReopenOwnFile).
bool HeapRecordWriter::MapMore(std::size_t at_least) {
  if (segment_count_ == kMaxSegments) return false;
  std::uint64_t bytes = RoundToPages(at_least);
  std::uint64_t grow = mapped_end_ / 2 < (std::uint64_t{64} << 20) ? mapped_end_ / 2 : 64 << 20;
  if (bytes < grow) bytes = grow;
  if (mapped_end_ + bytes > record::kMaxFileBytes) return false;
  OwnFile file;
  if (!ReopenOwnFile(&file)) return false;
  void* base = MAP_FAILED;
  if (posix_fallocate(file.fd, static_cast<off_t>(mapped_end_), static_cast<off_t>(bytes)) == 0) {
    base = MapRecord(file.fd, mapped_end_, bytes);
  }
  CloseOwnFile(&file);
  if (base == MAP_FAILED) return false;
  segments_[segment_count_++] = {static_cast<unsigned char*>(base), mapped_end_, bytes};
  mapped_end_ += bytes;
  return true;
}

std::uint64_t HeapRecordWriter::Reserve(std::size_t bytes, void** where) {
  MutexLock lock(space_lock_);
  bytes = RoundToPages(bytes);
  // Within the last segment, or a new one: nothing straddles two segments.
  const Segment* last = &segments_[segment_count_ - 1];
  if (file_bytes_ + bytes > last->offset + last->bytes) {
    if (!MapMore(bytes)) return 0;
    last = &segments_[segment_count_ - 1];
    file_bytes_ = last->offset;
  }
  std::uint64_t offset = file_bytes_;
  *where = last->base + (offset - last->offset);
  file_bytes_ += bytes;
  PublishWord(header_->file_bytes, file_bytes_);
  return offset;
}

// Linear probing without tombstones (removal shifts the run back), so that a table never fills with
// the dead and only ever grows with the live set.
void HeapRecordWriter::Put(Table& table, std::uint64_t key, const LiveObject& object) {
  std::size_t mask = table.capacity - 1;
  std::size_t i = MixBits(key) & mask;
  while (table.slots[i].key != record::kEmptyKey && table.slots[i].key != key) i = (i + 1) & mask;
  Slot& slot = table.slots[i];
  if (slot.key == record::kEmptyKey) ++table.used;
  slot.stack = object.stack;
  slot.generation = object.generation;
  slot.size = object.size;
  slot.weight = object.weight;
  slot.alloc_time_ns = object.alloc_time_ns;
  PublishKey(slot, key);
}

// A table twice the size, filled from the old one and then published in one store; the old one's
// space is not reused (the tables' sizes double, so all the old ones together are smaller than the
// newest).
bool HeapRecordWriter::GrowTable(std::size_t shard) {
  Table& old = tables_[shard];
  std::size_t capacity = old.capacity == 0 ? kFirstTableSlots : old.capacity * 2;
  void* where = nullptr;
  std::uint64_t offset;
  if (old.capacity == 0) {  // the shard's place among the first tables, reserved at creation
    where = first_tables_ + shard * kFirstTableSlots;
    offset = first_tables_offset_ + shard * kFirstTableSlots * sizeof(Slot);
  } else {
    offset = Reserve(capacity * sizeof(Slot), &where);
  }
  if (offset == 0) return false;
  // The entries rehashed land on every page of a table of its own: made present at once.
  if (old.capacity != 0) PrefaultForWrite(where, capacity * sizeof(Slot));
  Table fresh{static_cast<Slot*>(where), capacity, 0};
  for (std::size_t i = 0; i < old.capacity; ++i) {
    const Slot& s = old.slots[i];
    if (s.key == record::kEmptyKey || s.key == record::kTombstoneKey) continue;
    Put(fresh, s.key, {s.stack, s.generation, s.size, s.weight, s.alloc_time_ns});
  }
  PublishWord(header_->shard_tables[shard], record::TableWord(offset, Log2(capacity)));
  old = fresh;
  return true;
}

void HeapRecordWriter::ObjectAdded(std::size_t shard, std::uint64_t key, const LiveObject& object) {
  if (Broken()) return;
  Table& table = tables_[shard];
  if ((table.used + 1) * 2 > table.capacity && !GrowTable(shard)) return MarkIncomplete();
  Put(table, key, object);
}

void HeapRecordWriter::ObjectRemoved(std::size_t shard, std::uint64_t key) {
  if (Broken()) return;
  Table& table = tables_[shard];
  if (table.capacity == 0) return;
  std::size_t mask = table.capacity - 1;
  std::size_t hole = MixBits(key) & mask;
  while (table.slots[hole].key != key) {
    if (table.slots[hole].key == record::kEmptyKey) return;
    hole = (hole + 1) & mask;
  }
  // The hole is a tombstone while the run after it shifts back: a death mid-way leaves at worst one
  // object twice (the reader keeps one of each key), never the removed one.
  PublishKey(table.slots[hole], record::kTombstoneKey);
  for (std::size_t next = (hole + 1) & mask;; next = (next + 1) & mask) {
    Slot& candidate = table.slots[next];
    if (candidate.key == record::kEmptyKey) break;
    std::size_t home = MixBits(candidate.key) & mask;
    // The candidate stays if its home lies cyclically in (hole, next].
    bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (stays) continue;
    Slot& target = table.slots[hole];
    target.stack = candidate.stack;
    target.generation = candidate.generation;
    target.size = candidate.size;
    target.weight = candidate.weight;
    target.alloc_time_ns = candidate.alloc_time_ns;
    PublishKey(target, candidate.key);
    PublishKey(candidate, record::kTombstoneKey);
    hole = next;
  }
  PublishKey(table.slots[hole], record::kEmptyKey);
  --table.used;
}

void HeapRecordWriter::NodeCreated(StackId id, StackId parent, std::uint64_t frame) {
  if (Broken()) return;
  std::size_t chunk = id / record::kNodeChunkNodes;
  if (chunk >= record::kMaxNodeChunks) return MarkIncomplete();
  if (node_chunks_[chunk] == nullptr) {
    void* where = nullptr;
    std::uint64_t offset = Reserve(record::kNodeChunkNodes * sizeof(Node), &where);
    if (offset == 0) return MarkIncomplete();
    node_chunks_[chunk] = static_cast<Node*>(where);
    PublishWord(header_->node_chunks[chunk], offset);
  }
  Node& node = node_chunks_[chunk][id % record::kNodeChunkNodes];
  node.frame = frame;
  node.parent = parent;
  NoteMapping(frame);
}

// The first frame seen in a loaded object puts the object's executable segments in the log, as the
// profile writer's mapping table has them (objects/process_mappings.h). Later frames in the same
// object cost a scan of the objects seen so far.
void HeapRecordWriter::NoteMapping(std::uint64_t frame) {
  if (frame == 0) return;
  for (std::size_t i = 0; i < range_count_; ++i) {
    if (frame >= ranges_[i].start && frame < ranges_[i].limit) return;
  }
  if (range_count_ == kMaxRanges || !DescribeObjectAt(frame, &object_)) return;
  ranges_[range_count_++] = {object_.map_start, object_.map_end};
  for (int s = 0; s < object_.segment_count; ++s) {
    AppendMapping(object_.segments[s].start, object_.segments[s].limit,
                  object_.segments[s].file_offset);
  }
}

void HeapRecordWriter::AppendMapping(std::uint64_t start, std::uint64_t limit,
                                     std::uint64_t file_offset) {
  std::size_t path_bytes = strnlen(object_.path, sizeof(object_.path));
  std::size_t entry_bytes = (sizeof(record::MappingEntry) + path_bytes + 1 + 7) & ~std::size_t{7};
  std::uint64_t used = header_->mapping_log_bytes;
  if (used + entry_bytes > record::kMappingLogBytes) return;
  auto* entry = reinterpret_cast<record::MappingEntry*>(mapping_log_ + used);
  entry->entry_bytes = static_cast<std::uint32_t>(entry_bytes);
  entry->path_bytes = static_cast<std::uint32_t>(path_bytes);
  entry->start = start;
  entry->limit = limit;
  entry->file_offset = file_offset;
  memcpy(entry->build_id, object_.build_id, sizeof(entry->build_id));
  memcpy(entry + 1, object_.path, path_bytes);  // the NUL is already there: the space was zero
  PublishWord(header_->mapping_log_bytes, used + entry_bytes);
}

// Into the area the header does not name, then one store names it: a death during the copy leaves
// the previous copy in place.
void HeapRecordWriter::CopyPeak(const HeapSnapshot& snapshot, std::int64_t live_bytes,
                                std::uint64_t time_ns) {
  if (!KeepsPeaks()) return;  // ended: the mappings are gone
  std::size_t index = header_->peak_index == 0 ? 1 : 0;
  Area& area = peak_areas_[index];
  std::size_t count = snapshot.object_count();
  if (count > area.capacity) {
    std::size_t capacity = count + count / 4 + 64;
    void* where = nullptr;
    std::uint64_t offset = Reserve(capacity * sizeof(Slot), &where);
    if (offset == 0) return MarkIncomplete();
    area = {static_cast<Slot*>(where), offset, capacity};
  }
  const HeapSnapshot::Object* objects = snapshot.objects();
  for (std::size_t i = 0; i < count; ++i) {
    area.slots[i] = {objects[i].count, objects[i].stack,  objects[i].generation,
                     objects[i].size,  objects[i].weight, objects[i].alloc_time_ns};
  }
  record::PeakCopy& copy = header_->peaks[index];
  copy.area = area.offset;
  copy.count = count;
  copy.live_bytes = live_bytes;
  copy.time_ns = time_ns;
  PublishWord(header_->peak_index, index);
}

// "dir/name.123.pb.gz" -> "dir/name.123.record" (".pb.gz" or ".pb" replaced, else appended to).
// Always with the pid: a template without %p names every process's profile alike, and a fork
// child must never take its parent's record for a leftover.
bool RecordPath(char* out, std::size_t capacity) {
  char profile[PATH_MAX];
  if (!ExpandProfileName(0, profile, sizeof(profile))) return false;
  std::size_t length = strlen(profile);
  for (const char* extension : {".pb.gz", ".pb"}) {
    std::size_t n = strlen(extension);
    if (length > n && strcmp(profile + length - n, extension) == 0) {
      length -= n;
      break;
    }
  }
  profile[length] = '\0';
  Appender path(out, capacity);
  path.Add(profile);
  if (strstr(g_settings.output_template, "%p") == nullptr) {
    path.Add(".");
    path.AddUnsigned(static_cast<unsigned long long>(getpid()), 1);
  }
  path.Add(record::kFileExtension);
  return path.Finish();
}

}  // namespace

void StartHeapRecord(HeapRecorder& recorder) {
  if (!g_settings.heap_record || g_tried) return;
  g_tried = true;
  char path[PATH_MAX];
  if (!RecordPath(path, sizeof(path))) return;
  auto* writer = new (g_writer_storage) HeapRecordWriter();
  if (!writer->Create(path, g_interval.load())) {
    writer->~HeapRecordWriter();
    return;
  }
  g_writer.store(writer, std::memory_order_release);
  g_observed = &recorder;
  recorder.Observe(writer);
  NoteAttachInHeapRecord();
  if (g_settings.manifest[0] != '\0') {
    AppendToManifest(g_settings.manifest, getpid(), schema::kManifestRecord, path);
  }
}

void EndHeapRecord() {
  g_tried = true;  // under the dump's lock, as StartHeapRecord: none is started after this
  HeapRecordWriter* writer = g_writer.load(std::memory_order_acquire);
  // A child made without fork's handlers (_Fork, a raw clone) still maps its parent's record: the
  // file is the parent's to end and to park.
  if (writer == nullptr || !InOwnProcess()) return;
  // Threads still allocating (exit's handlers, other threads) must not store into pages about to
  // be unmapped: detaching returns once no change is being told, and the peak copies are made
  // under the capture lock, which the caller holds.
  g_observed->Observe(nullptr);
  writer->End();
}

void KeepHeapRecordOfUnwrittenEnding(DumpReason reason, int signal_number, int error) {
  HeapRecordWriter* writer = g_writer.load(std::memory_order_acquire);
  if (writer == nullptr || !InOwnProcess()) return;
  const char* name = ReasonName(reason);
  for (std::uint64_t ending = 1; ending < record::kEndingCount; ++ending) {
    if (strcmp(record::kEndingReasons[ending], name) == 0) {
      writer->MarkEnding(ending, signal_number, error);
      return;
    }
  }
}

void NoteAttachInHeapRecord() {
  HeapRecordWriter* writer = g_writer.load(std::memory_order_acquire);
  const AttachFacts facts = CurrentAttachFacts();
  if (writer == nullptr || !facts.injected || !InOwnProcess()) return;
  record::RecordedAttach attach = {};
  attach.attached_at_s = LastAttachNs() / 1000000000ull;
  attach.held_at_attach = facts.heap_known ? facts.held_at_attach : record::kHeapNotKnown;
  attach.rss_at_attach = facts.rss_at_attach;
  attach.heap_in_use = facts.in_use;
  attach.unattributed = facts.unattributed;
  attach.held_walked = facts.held_walked;
  memcpy(attach.held_by_size, facts.held_by_size,
         strnlen(facts.held_by_size, sizeof(attach.held_by_size) - 1));
  writer->NoteAttach(attach);
}

void RecordPeakCopy(const HeapSnapshot& snapshot, std::int64_t live_bytes, std::uint64_t time_ns) {
  HeapRecordWriter* writer = g_writer.load(std::memory_order_acquire);
  if (writer != nullptr) writer->CopyPeak(snapshot, live_bytes, time_ns);
}

bool HeapRecordKeepsPeaks() {
  HeapRecordWriter* writer = g_writer.load(std::memory_order_acquire);
  return writer != nullptr && writer->KeepsPeaks();
}

std::uint64_t HeapRecordBytes() {
  HeapRecordWriter* writer = g_writer.load(std::memory_order_acquire);
  return writer != nullptr ? writer->MappedBytes() : 0;
}

void LockHeapRecordForFork() {
  if (HeapRecordWriter* writer = g_writer.load()) writer->space_lock().Lock();
}

void UnlockHeapRecordAfterForkInParent() {
  if (HeapRecordWriter* writer = g_writer.load()) writer->space_lock().Unlock();
}

void DropParentHeapRecordInChild() {
  g_tried = false;  // the child may keep one of its own
  HeapRecordWriter* writer = g_writer.load();
  if (writer == nullptr) return;
  // Alone in the child: no other thread can be inside the writer.
  if (g_observed != nullptr) g_observed->Observe(nullptr);
  writer->Unmap();
  writer->~HeapRecordWriter();
  g_writer.store(nullptr);
  g_observed = nullptr;
}

}  // namespace heaprec::preload
