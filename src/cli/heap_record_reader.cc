#include "cli/heap_record_reader.h"

#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include "analysis/profile_view.h"
#include "base/file_io.h"
#include "cli/remote_process.h"
#include "profile/pprof_reader.h"
#include "render/output_file.h"
#include "schema/heap_record_format.h"
#include "schema/profile_schema.h"
#include "schema/runtime_frames.h"

namespace heaprec::cli {
namespace {

constexpr std::uint32_t kMaxFrames = 1024;  // the preload library keeps at most this many

// The file's bytes, with every read checked against its size.
class RecordBytes {
 public:
  RecordBytes(std::string path, std::string data)
      : path_(std::move(path)), data_(std::move(data)) {}

  template <typename T>
  const T* At(std::uint64_t offset, std::uint64_t count = 1) const {
    if (offset > data_.size() || count > (data_.size() - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_.data() + offset);
  }
  std::runtime_error Error(const std::string& what) const {
    return std::runtime_error(path_ + ": " + what);
  }

 private:
  std::string path_;
  std::string data_;
};

std::string Bounded(const char* text, std::size_t capacity) {
  return std::string(text, strnlen(text, capacity));
}

// The stack ending at node `id`, leaf first; it ends early at a node the file does not hold.
std::vector<std::uint64_t> Frames(const RecordBytes& bytes, const record::Header& header,
                                  std::uint32_t id) {
  std::vector<std::uint64_t> frames;
  while (id > 1 && frames.size() < kMaxFrames) {  // node 1 is the root, the empty stack
    std::size_t chunk = id / record::kNodeChunkNodes;
    if (chunk >= record::kMaxNodeChunks || header.node_chunks[chunk] == 0) break;
    const auto* node = bytes.At<record::Node>(
        header.node_chunks[chunk] + (id % record::kNodeChunkNodes) * sizeof(record::Node));
    if (node == nullptr) break;
    frames.push_back(node->frame);
    id = node->parent;
  }
  return frames;
}

RecordedObject Object(const RecordBytes& bytes, const record::Header& header,
                      const record::Slot& slot) {
  return {Frames(bytes, header, slot.stack), slot.size, slot.weight, slot.alloc_time_ns};
}

bool IsObject(const record::Slot& slot) {
  return slot.key != record::kEmptyKey && slot.key != record::kTombstoneKey && slot.weight > 0;
}

void ReadLive(const RecordBytes& bytes, const record::Header& header, HeapRecord& out) {
  // A removal that was shifting a run back when the process died may leave one object twice.
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t word : header.shard_tables) {
    if (word == 0) continue;
    const auto* slots =
        bytes.At<record::Slot>(record::TableOffset(word), record::TableCapacity(word));
    if (slots == nullptr) {
      out.incomplete = true;
      continue;
    }
    for (std::uint64_t i = 0; i < record::TableCapacity(word); ++i) {
      if (IsObject(slots[i]) && seen.insert(slots[i].key).second) {
        out.live.push_back(Object(bytes, header, slots[i]));
      }
    }
  }
}

void ReadPeak(const RecordBytes& bytes, const record::Header& header, HeapRecord& out) {
  if (header.peak_index > 1) return;
  const record::PeakCopy& copy = header.peaks[header.peak_index];
  const auto* slots = bytes.At<record::Slot>(copy.area, copy.count);
  if (slots == nullptr) return;
  for (std::uint64_t i = 0; i < copy.count; ++i) {
    if (!IsObject(slots[i])) continue;
    RecordedObject site = Object(bytes, header, slots[i]);
    site.samples = slots[i].key;  // a site: its key counts its objects (record::PeakCopy)
    out.peak.push_back(std::move(site));
  }
  out.peak_bytes = copy.live_bytes;
  out.peak_time_ns = copy.time_ns;
}

void ReadMappings(const RecordBytes& bytes, const record::Header& header, HeapRecord& out) {
  std::uint64_t used = std::min<std::uint64_t>(header.mapping_log_bytes, record::kMappingLogBytes);
  for (std::uint64_t at = 0; at + sizeof(record::MappingEntry) <= used;) {
    const auto* entry = bytes.At<record::MappingEntry>(header.mapping_log_offset + at);
    if (entry == nullptr || entry->entry_bytes < sizeof(record::MappingEntry) ||
        entry->entry_bytes > used - at) {
      break;
    }
    const char* path = bytes.At<char>(header.mapping_log_offset + at + sizeof(*entry),
                                      entry->entry_bytes - sizeof(*entry));
    if (path == nullptr) break;
    out.mappings.push_back({entry->start, entry->limit, entry->file_offset,
                            Bounded(path, entry->entry_bytes - sizeof(*entry)),
                            Bounded(entry->build_id, sizeof(entry->build_id))});
    at += entry->entry_bytes;
  }
}

// pprof wants mappings apart: where two overlap (a library loaded where an unloaded one was), the
// later one in the log wins.
std::vector<const RecordedMapping*> DisjointMappings(const std::vector<RecordedMapping>& recorded) {
  std::map<std::uint64_t, const RecordedMapping*> by_start;
  for (const RecordedMapping& m : recorded) {
    if (m.limit <= m.start) continue;
    for (auto it = by_start.begin(); it != by_start.end();) {
      bool overlaps = it->second->start < m.limit && m.start < it->second->limit;
      it = overlaps ? by_start.erase(it) : std::next(it);
    }
    by_start[m.start] = &m;
  }
  std::vector<const RecordedMapping*> out;
  for (const auto& [start, m] : by_start) out.push_back(m);
  return out;
}

std::string SignalName(int signal_number) {
  const char* abbrev = signal_number > 0 ? sigabbrev_np(signal_number) : nullptr;
  return abbrev != nullptr ? std::string("SIG") + abbrev : "";
}

// The inuse_space of the profile of process `pid` at `path`, or -1 when there is none to read
// (or it is another process's).
std::int64_t InuseBytesOfFile(const std::string& path, std::uint64_t pid) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return -1;
  try {
    profile::Profile p = profile::ReadProfileFile(path);
    if (analysis::CommentField(p, schema::kPidField) != std::to_string(pid)) return -1;
    for (std::size_t t = 0; t < p.sample_types.size(); ++t) {
      if (p.sample_types[t].type != schema::kInuseSpace) continue;
      std::int64_t total = 0;
      for (const profile::Sample& s : p.samples) total += s.values[t];
      return total;
    }
  } catch (const std::exception&) {
  }
  return -1;
}

// The profile the library would have written of `objects` (core/heap_profile_encoder.h's
// conventions: the four heap sample types, one sample per stack and requested size with its
// `bytes` and `age_ns` labels, locations by address in their mappings, drop_frames), with comments
// that say where it came from. alloc_* count the live objects alone: the record keeps no history.
profile::Profile BuildProfile(const HeapRecord& record, const std::vector<RecordedObject>& objects,
                              const char* reason, int signal_number, std::uint64_t time_ns) {
  profile::Profile p;
  for (const char* type :
       {schema::kAllocObjects, schema::kAllocSpace, schema::kInuseObjects, schema::kInuseSpace}) {
    bool objects_type = type == schema::kAllocObjects || type == schema::kInuseObjects;
    p.sample_types.push_back({type, objects_type ? schema::kCountUnit : schema::kBytesUnit});
  }
  p.period_type = {schema::kPerBytePeriodType, schema::kBytesUnit};
  p.period = static_cast<std::int64_t>(record.sample_interval);
  p.default_sample_type = schema::kInuseSpace;
  p.drop_frames = schema::kRuntimeFrames;
  p.time_nanos = static_cast<std::int64_t>(time_ns);
  p.duration_nanos = time_ns > record.start_time_ns
                         ? static_cast<std::int64_t>(time_ns - record.start_time_ns)
                         : 0;

  std::vector<const RecordedMapping*> mappings = DisjointMappings(record.mappings);
  for (std::size_t i = 0; i < mappings.size(); ++i) {
    const RecordedMapping& m = *mappings[i];
    p.mappings.push_back({.id = i + 1,
                          .memory_start = m.start,
                          .memory_limit = m.limit,
                          .file_offset = m.file_offset,
                          .filename = m.path,
                          .build_id = m.build_id});
  }
  auto mapping_of = [&](std::uint64_t address) -> std::uint64_t {
    auto it =
        std::upper_bound(mappings.begin(), mappings.end(), address,
                         [](std::uint64_t a, const RecordedMapping* m) { return a < m->start; });
    if (it == mappings.begin() || address >= (*std::prev(it))->limit) return 0;
    return static_cast<std::uint64_t>(it - mappings.begin());
  };
  std::map<std::uint64_t, std::uint64_t> location_of;  // address -> location id
  struct Group {
    double objects = 0, bytes = 0;
    std::uint64_t oldest_ns = ~std::uint64_t{0};
  };
  std::map<std::pair<std::vector<std::uint64_t>, std::uint64_t>, Group> groups;
  for (const RecordedObject& o : objects) {
    Group& g = groups[{o.frames, o.size}];
    g.objects += o.weight;
    g.bytes += o.weight * static_cast<double>(o.size);
    g.oldest_ns = std::min(g.oldest_ns, o.alloc_time_ns);
  }
  for (const auto& [key, g] : groups) {
    profile::Sample sample;
    for (std::uint64_t frame : key.first) {
      auto [it, fresh] = location_of.emplace(frame, p.locations.size() + 1);
      if (fresh) {
        p.locations.push_back(
            {.id = it->second, .mapping_id = mapping_of(frame), .address = frame});
      }
      sample.location_ids.push_back(it->second);
    }
    std::int64_t count = std::llround(g.objects), bytes = std::llround(g.bytes);
    sample.values = {count, bytes, count, bytes};
    sample.labels.push_back({.key = schema::kBytesLabel,
                             .num = static_cast<std::int64_t>(key.second),
                             .num_unit = schema::kBytesUnit});
    if (g.oldest_ns != 0 && g.oldest_ns <= time_ns) {
      sample.labels.push_back({.key = schema::kAgeLabel,
                               .num = static_cast<std::int64_t>(time_ns - g.oldest_ns),
                               .num_unit = schema::kNanosecondsUnit});
    }
    p.samples.push_back(std::move(sample));
  }

  std::string first = std::string("heaprec ") + HEAPREC_VERSION + " " + schema::kPidField + "=" +
                      std::to_string(record.pid) + " " + schema::kReasonField + "=" + reason;
  std::string signal = SignalName(signal_number);
  if (!signal.empty()) first += std::string(" ") + schema::kSignalField + "=" + signal;
  first += std::string(" ") + schema::kSampleIntervalField + "=" +
           std::to_string(record.sample_interval);
  p.comments.push_back(first);
  std::uint64_t live_samples = 0;
  for (const RecordedObject& o : objects) live_samples += o.samples;
  p.comments.push_back(std::string(schema::kLiveSamplesField) + "=" + std::to_string(live_samples) +
                       " recovered_from=" + record.file +
                       (record.incomplete ? " incomplete=1" : ""));
  if (record.attach) {
    // As the library's profiles of an attached process say it (preload/dump/profile_comments.cc).
    const record::RecordedAttach& a = *record.attach;
    std::string line = std::string(schema::kAttachedField) + "=1 " + schema::kAttachedAtField +
                       "=" + std::to_string(a.attached_at_s) + " " + schema::kInjectedField + "=1";
    if (a.held_at_attach != record::kHeapNotKnown) {
      line +=
          std::string(" ") + schema::kHeldAtAttachField + "=" + std::to_string(a.held_at_attach);
    }
    line += std::string(" ") + schema::kRssAtAttachField + "=" + std::to_string(a.rss_at_attach);
    if (a.held_at_attach != record::kHeapNotKnown) {
      line += std::string(" ") + schema::kHeapInUseField + "=" + std::to_string(a.heap_in_use) +
              " " + schema::kUnattributedField + "=" + std::to_string(a.unattributed);
    }
    if (a.held_by_size[0] != '\0') {
      line += std::string(" ") + schema::kHeldWalkedField + "=" + std::to_string(a.held_walked) +
              " " + schema::kHeldBySizeField + "=" + a.held_by_size;
    }
    p.comments.push_back(line);
  }
  if (record.write_error != 0) {
    const char* name = strerrorname_np(record.write_error);
    p.comments.push_back(std::string(schema::kFinalWriteErrorField) + "=" +
                         (name != nullptr ? name : std::to_string(record.write_error)));
  }
  return p;
}

// "dir/p.1.pb.gz" -> "dir/p.1.peak.pb.gz"; another name gets the infix at its end.
std::string WithInfix(const std::string& path, const char* infix) {
  for (const char* extension : {schema::kProfileSuffix, schema::kRawProfileSuffix}) {
    if (path.ends_with(extension)) {
      return path.substr(0, path.size() - strlen(extension)) + infix + extension;
    }
  }
  return path + infix;
}

}  // namespace

std::int64_t InuseBytes(const std::vector<RecordedObject>& objects) {
  double total = 0;
  for (const RecordedObject& o : objects) total += o.weight * static_cast<double>(o.size);
  return static_cast<std::int64_t>(total);
}

HeapRecord ReadHeapRecord(const std::string& path) {
  RecordBytes bytes(path, base::ReadFile(path));
  const auto* header = bytes.At<record::Header>(0);
  if (header == nullptr || memcmp(header->magic, record::kMagic, sizeof(record::kMagic)) != 0) {
    throw bytes.Error("not a heaprec heap record");
  }
  const std::size_t header_bytes =
      header->version >= 4 ? sizeof(record::Header) : record::kHeaderBytesBefore4;
  if (header->version < record::kOldestReadableVersion || header->version > record::kVersion ||
      header->header_bytes != header_bytes) {
    throw bytes.Error("a heap record of another heaprec version (format " +
                      std::to_string(header->version) + ", this heaprec reads " +
                      std::to_string(record::kOldestReadableVersion) + " to " +
                      std::to_string(record::kVersion) + ")");
  }
  HeapRecord out;
  out.file = path;
  out.pid = header->pid;
  out.start_time_ns = header->start_time_ns;
  out.sample_interval = header->sample_interval;
  // The record lives beside the profiles (its name is the final profile's): their directory is
  // the record's as this reader finds it. The path the process wrote is its own view, which may
  // mean nothing here: /proc/self/fd/N/... in a process heaprec attach handed a directory to, a
  // container's path seen from the host, a path relative to the process's directory.
  const std::string written = Bounded(header->profile_path, sizeof(header->profile_path));
  if (!written.empty()) {
    out.profile_path =
        (std::filesystem::path(path).parent_path() / std::filesystem::path(written).filename())
            .string();
  }
  out.program = Bounded(header->program, sizeof(header->program));
  if (header->version >= 4 && header->attach.attached_at_s != 0) {
    out.attach = header->attach;
    out.attach->held_by_size[sizeof(out.attach->held_by_size) - 1] = '\0';  // a file's bytes
  }
  const std::uint64_t state = header->state & record::kStateBits;
  out.ended = state == record::kEnded;
  out.incomplete = state == record::kIncomplete;
  const std::uint64_t ending = record::EndingOf(header->state);
  out.ending_reason = ending < record::kEndingCount ? record::kEndingReasons[ending] : "";
  if (!out.ending_reason.empty()) {
    out.ending_signal = record::EndingSignal(header->state);
    out.write_error = record::EndingError(header->state);
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    out.death_time_ns = static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                        static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
  }
  ReadLive(bytes, *header, out);
  ReadPeak(bytes, *header, out);
  ReadMappings(bytes, *header, out);
  return out;
}

namespace {

// Whether process `pid` maps the file with `device` and `inode`, or the file at `path`: the
// device and inode say it whatever path the process sees the file by (another mount namespace),
// the path where a file system shows other numbers there (overlayfs). A deleted file that had the
// name (a spare found not fit to become a record, still mapped by whoever made it; its path ends
// in " (deleted)") is another file.
bool MapsFile(pid_t pid, dev_t device, ino_t inode, const std::string& path) {
  for (const Mapping& m : RemoteProcess(pid).Mappings()) {
    if ((m.inode == inode && m.device == device) || (!path.empty() && m.path == path)) return true;
  }
  return false;
}

}  // namespace

bool RecordOwnerIsRunning(const HeapRecord& record) {
  struct stat file;
  if (stat(record.file.c_str(), &file) != 0) return false;  // gone: nothing maps it by this name
  std::error_code ec;
  const std::string own = std::filesystem::canonical(record.file, ec).string();
  // The pid the record names, first; then every process: one in another pid namespace (a
  // container's, attached from the host) named the record by the pid it has there.
  const pid_t pid = static_cast<pid_t>(record.pid);
  // Another user's process, whose maps cannot be read: taken for the owner, as before any look.
  if (pid != 0 && kill(pid, 0) != 0 && errno == EPERM) return true;
  if (pid != 0 && MapsFile(pid, file.st_dev, file.st_ino, own)) return true;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t other = static_cast<pid_t>(std::stol(name));
    // Not this process, which may hold the record mapped to read it.
    if (other != pid && other != getpid() && MapsFile(other, file.st_dev, file.st_ino, own)) {
      return true;
    }
  }
  return false;
}

RecoveredFiles WriteRecoveredProfiles(const HeapRecord& record, const std::string& death_path,
                                      int signal_number) {
  RecoveredFiles files;
  files.death = death_path;
  if (files.death.empty()) {
    files.death = record.profile_path;
    if (files.death.empty()) files.death = record.file + schema::kProfileSuffix;
    // Another process's profile there (a template without %p names all alike) is never replaced.
    std::error_code ec;
    if (std::filesystem::exists(files.death, ec)) {
      files.death = WithInfix(files.death, ("." + std::to_string(record.pid)).c_str());
    }
  }
  std::uint64_t death_time =
      record.death_time_ns != 0 ? record.death_time_ns : record.start_time_ns;
  // A process that saw its end but could not write its final profile: that profile, as it would
  // have been labelled.
  const bool unwritten = !record.ending_reason.empty();
  files.reason = unwritten ? record.ending_reason : schema::kReasonKilled;
  render::WriteProfileFile(
      BuildProfile(record, record.live, files.reason.c_str(),
                   unwritten ? record.ending_signal : signal_number, death_time),
      files.death);
  // The peak: the larger of the record's peak copy and the heap at death (a process killed while
  // growing died at its peak), unless the process's peak profile on disk holds more. That is the
  // one beside the name its final profile had, which the process may have written itself (always,
  // before an unwritten ending, whose own name may be taken), unless another process's is there.
  bool copy_larger = !record.peak.empty() && InuseBytes(record.peak) > InuseBytes(record.live);
  const std::vector<RecordedObject>& peak = copy_larger ? record.peak : record.live;
  std::string peak_path = WithInfix(files.death, schema::kPeakInfix);
  if (death_path.empty() && !record.profile_path.empty()) {
    std::string own = WithInfix(record.profile_path, schema::kPeakInfix);
    std::error_code ec;
    if (!std::filesystem::exists(own, ec) || InuseBytesOfFile(own, record.pid) >= 0) {
      peak_path = own;
    }
  }
  if (InuseBytes(peak) > InuseBytesOfFile(peak_path, record.pid)) {
    render::WriteProfileFile(BuildProfile(record, peak, schema::kReasonPeak, 0,
                                          copy_larger ? record.peak_time_ns : death_time),
                             peak_path);
    files.peak = peak_path;
  }
  return files;
}

std::vector<std::string> FindHeapRecords(const std::string& directory) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > strlen(record::kFileExtension) && name.ends_with(record::kFileExtension) &&
        entry.is_regular_file(ec)) {
      found.push_back(entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace heaprec::cli
