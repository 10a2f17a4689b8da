#include "core/profile_file.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/appender.h"
#include "core/gzip_file_sink.h"
#include "core/own_descriptors.h"
#include "schema/profile_schema.h"

namespace heaprec {
namespace {

// Where a profile name's ".pb.gz" starts (its length when it has none): what sequence numbers,
// tags and ".peak" go before.
std::size_t ExtensionStart(const char* path, std::size_t length) {
  constexpr std::size_t kExtensionLength = sizeof(schema::kProfileSuffix) - 1;
  return length >= kExtensionLength &&
                 std::strcmp(path + length - kExtensionLength, schema::kProfileSuffix) == 0
             ? length - kExtensionLength
             : length;
}

// UTC date and time without gmtime_r, which takes glibc's time-zone lock and so may not be called
// from the signal handler that writes a crash profile. Days to civil date: the proleptic Gregorian
// calendar counted in 400-year eras of 146097 days, with years starting on March 1st so that the
// leap day falls at the end of a year.
struct CivilTime {
  long long year;
  unsigned month, day, hour, minute, second;
};

CivilTime ToCivil(long long unix_seconds) {
  long long days = unix_seconds / 86400, seconds_of_day = unix_seconds % 86400;
  if (seconds_of_day < 0) {
    seconds_of_day += 86400;
    days -= 1;
  }
  long long z = days + 719468;  // days since 0000-03-01
  long long era = (z >= 0 ? z : z - 146096) / 146097;
  long long day_of_era = z - era * 146097;  // [0, 146096]
  long long year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) /
      365;  // [0, 399]
  long long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  long long shifted_month = (5 * day_of_year + 2) / 153;  // 0 = March
  CivilTime t;
  t.day = static_cast<unsigned>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  t.month = static_cast<unsigned>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  t.year = year_of_era + era * 400 + (t.month <= 2 ? 1 : 0);
  t.hour = static_cast<unsigned>(seconds_of_day / 3600);
  t.minute = static_cast<unsigned>(seconds_of_day / 60 % 60);
  t.second = static_cast<unsigned>(seconds_of_day % 60);
  return t;
}

void AddTime(Appender& a, long long unix_seconds) {
  // Far outside any real clock the seconds are written as they are; the bounds are those of a
  // struct tm (an int year counted from 1900), which earlier versions used.
  constexpr long long kFirstSecond = -67768040609827200;  // -2147481748-01-01T00:00:00Z
  constexpr long long kLastSecond = 67768036191676799;    // 2147485547-12-31T23:59:59Z
  if (unix_seconds < kFirstSecond || unix_seconds > kLastSecond) {
    a.AddSigned(unix_seconds, 1);
    return;
  }
  CivilTime t = ToCivil(unix_seconds);
  a.AddSigned(t.year, 4);
  a.AddUnsigned(t.month, 2);
  a.AddUnsigned(t.day, 2);
  a.Add("T");
  a.AddUnsigned(t.hour, 2);
  a.AddUnsigned(t.minute, 2);
  a.AddUnsigned(t.second, 2);
  a.Add("Z");
}

// Program names come from the process and end up in a path: keep them to a safe alphabet.
void AddProgramName(Appender& a, const char* program) {
  for (const char* p = program; *p != '\0'; ++p) {
    char c = *p;
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '_' || c == '.' || c == '+';
    char replacement = safe ? c : '_';
    a.Add(&replacement, 1);
  }
}

// The name for the N-th profile that wanted `path`: "-N" before its extension.
bool TaggedPath(const char* path, unsigned tag, char* out, std::size_t capacity) {
  char insert[16];
  Appender a(insert, sizeof(insert));
  a.Add("-");
  a.AddUnsigned(tag, 1);
  return a.Finish() && InsertBeforeExtension(path, insert, out, capacity);
}

// Gives the finished temporary file its name. Without kReplace an existing file is kept if it was
// modified at or after `keep_since` (another program of this process, before an exec, or another
// process using a template without %p): the profile takes the first free tagged name instead.
int Publish(const char* temporary, const char* path, const WriteOptions& options) {
  char candidate[PATH_MAX];
  const char* name = path;
  for (unsigned tag = 2;; ++tag) {
    if (options.replace) {
      if (rename(temporary, name) == 0) break;
      return errno;
    }
    if (renameat2(AT_FDCWD, temporary, AT_FDCWD, name, RENAME_NOREPLACE) == 0) break;
    if (errno == EINVAL || errno == ENOSYS) {
      // A file system without RENAME_NOREPLACE: link() fails on an existing name just as well.
      if (link(temporary, name) == 0) {
        unlink(temporary);
        break;
      }
    }
    if (errno != EEXIST) return errno;
    // Only a regular file written since keep_since_ns is kept. Anything else is replaced: a stale
    // profile of an earlier run, or a symlink planted at the name (rename replaces the link
    // itself, never its target).
    struct stat existing;
    bool keep =
        lstat(name, &existing) == 0 && S_ISREG(existing.st_mode) &&
        static_cast<long long>(existing.st_mtim.tv_sec) * 1000000000ll + existing.st_mtim.tv_nsec >=
            options.keep_since_ns;
    if (!keep) {
      if (rename(temporary, name) == 0) break;
      return errno;
    }
    if (tag > 999 || !TaggedPath(path, tag, candidate, sizeof(candidate))) return EEXIST;
    name = candidate;
  }
  if (options.written_path != nullptr) {
    std::size_t length = std::strlen(name);
    if (length < options.written_capacity) std::memcpy(options.written_path, name, length + 1);
  }
  return 0;
}

}  // namespace

bool ExpandOutputTemplate(const char* pattern, int pid, const char* program, long long unix_seconds,
                          unsigned sequence, char* out, std::size_t capacity) {
  if (capacity == 0) return false;  // not even room for the terminator; `out` is not touched
  Appender a(out, capacity);
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (*p != '%' || p[1] == '\0') {
      a.Add(p, 1);
      continue;
    }
    ++p;
    switch (*p) {
      case 'p':
        a.AddUnsigned(static_cast<unsigned long long>(pid), 1);
        break;
      case 't':
        AddTime(a, unix_seconds);
        break;
      case 'e':
        AddProgramName(a, program);
        break;
      case '%':
        a.Add("%", 1);
        break;
      default:  // not a known directive: keep it as written
        a.Add(p - 1, 2);
        break;
    }
  }
  if (!a.Finish()) return false;
  if (sequence == 0) return true;
  // ".NNNN" before the extension, in place: only the extension moves.
  std::size_t length = a.size();
  std::size_t insert_at = ExtensionStart(out, length);
  char extension[sizeof(schema::kProfileSuffix)];
  std::size_t extension_length = length - insert_at;
  std::memcpy(extension, out + insert_at, extension_length + 1);
  Appender tail(out + insert_at, capacity - insert_at);
  tail.Add(".");
  tail.AddUnsigned(sequence, 4);
  tail.Add(extension, extension_length);
  return tail.Finish();
}

namespace {

// Writes the profile into the new file `temporary`. *lost is set when the program took the
// descriptor over meanwhile (closed it, perhaps reused its number): the file is then incomplete,
// and removed if its name is still heaprec's.
int WriteTemporary(const char* temporary, const HeapSnapshot& snapshot,
                   const ProfileMetadata& metadata, MemoryResource& memory, GzipMode gzip,
                   bool* lost) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
  OwnFile file;
  bool opened = OpenOwnFile(temporary, kFlags, 0600, &file);
  if (!opened && errno == EEXIST) {
    // Left by an earlier process with the same pid that died mid-dump. Unlinking removes the name
    // only (a planted symlink, never its target), then O_EXCL creates afresh.
    unlink(temporary);
    opened = OpenOwnFile(temporary, kFlags, 0600, &file);
  }
  if (!opened) return errno;
  int error = 0;
  errno = 0;
  OwnFileSink output(file);
  {
    GzipFileSink sink(output, memory, gzip);
    if (!sink.ok() || !EncodeHeapProfile(snapshot, metadata, memory, sink) || !sink.Finish()) {
      error = errno != 0 ? errno : EIO;
    }
  }
  // Complete only if the descriptor is still ours and the file holds every byte written: a
  // program's lseek or ftruncate on a number it thought its own shows as a wrong size.
  struct stat st;
  *lost = output.lost() || !StillOwn(file, &st) ||
          static_cast<std::uint64_t>(st.st_size) != output.written();
  int close_error = CloseOwnFile(&file);
  if (error == 0) error = close_error;
  struct stat named;
  bool name_is_ours =
      lstat(temporary, &named) == 0 && named.st_dev == file.device && named.st_ino == file.inode;
  if (*lost) error = EBADF;
  if (error != 0 && name_is_ours) unlink(temporary);
  if (error == 0 && !name_is_ours) error = ENOENT;  // renamed or removed under us
  return error;
}

}  // namespace

int WriteHeapProfileFile(const char* path, const HeapSnapshot& snapshot,
                         const ProfileMetadata& metadata, MemoryResource& memory,
                         const WriteOptions& options) {
  int error = 0;
  // A descriptor the program took over costs the attempt, not the profile: once more, on a new
  // descriptor (a program closing heaprec's numbers in a loop loses it twice, and says so).
  for (int attempt = 0; attempt < 2; ++attempt) {
    char temporary[PATH_MAX];
    Appender a(temporary, sizeof(temporary));
    a.Add(path);
    // pid and a per-process counter: two dumps to one path at once (threads of one process, or a
    // stopped profiler's dump finishing beside a new one's) must not share a temporary file.
    static std::atomic<unsigned> dumps{0};
    a.Add(".tmp.");
    a.AddUnsigned(static_cast<unsigned long long>(getpid()), 1);
    a.Add(".");
    a.AddUnsigned(dumps.fetch_add(1, std::memory_order_relaxed), 1);
    if (!a.Finish()) return ENAMETOOLONG;
    bool lost = false;
    error = WriteTemporary(temporary, snapshot, metadata, memory, options.gzip, &lost);
    if (error == 0) {
      error = Publish(temporary, path, options);
      if (error != 0) unlink(temporary);
      return error;
    }
    if (!lost) return error;
  }
  return error;
}

bool InsertBeforeExtension(const char* path, const char* insert, char* out, std::size_t capacity) {
  std::size_t length = std::strlen(path);
  std::size_t cut = ExtensionStart(path, length);
  Appender a(out, capacity);
  a.Add(path, cut);
  a.Add(insert);
  a.Add(path + cut);
  return a.Finish();
}

}  // namespace heaprec
