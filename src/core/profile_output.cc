#include "core/profile_output.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/gzip_file_sink.h"

namespace heaprec {
namespace {

class Appender {
 public:
  Appender(char* out, std::size_t capacity) : out_(out), capacity_(capacity) {}
  void Add(const char* s, std::size_t n) {
    if (size_ + n >= capacity_) {
      overflow_ = true;
      return;
    }
    std::memcpy(out_ + size_, s, n);
    size_ += n;
  }
  void Add(const char* s) { Add(s, std::strlen(s)); }
  void AddUnsigned(unsigned long long v, int min_digits) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0 || n < min_digits);
    for (int i = n - 1; i >= 0; --i) Add(&digits[i], 1);
  }
  // A minus sign for negative values (years before 1 AD, absurd times).
  void AddSigned(long long v, int min_digits) {
    unsigned long long magnitude = static_cast<unsigned long long>(v);
    if (v < 0) {
      Add("-", 1);
      magnitude = 0 - magnitude;  // also right for LLONG_MIN
    }
    AddUnsigned(magnitude, min_digits);
  }
  bool Finish() {
    if (overflow_ || size_ >= capacity_) return false;  // no room even for the terminator
    out_[size_] = '\0';
    return true;
  }
  std::size_t size() const { return size_; }

 private:
  char* out_;
  std::size_t capacity_;
  std::size_t size_ = 0;
  bool overflow_ = false;
};

void AddTime(Appender& a, long long unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm;
  if (gmtime_r(&t, &tm) == nullptr) {  // the year does not fit in an int
    a.AddSigned(unix_seconds, 1);
    return;
  }
  // In long long: tm_year + 1900 overflows int for the last 1900 years gmtime_r can represent.
  a.AddSigned(static_cast<long long>(tm.tm_year) + 1900, 4);
  a.AddUnsigned(static_cast<unsigned>(tm.tm_mon + 1), 2);
  a.AddUnsigned(static_cast<unsigned>(tm.tm_mday), 2);
  a.Add("T");
  a.AddUnsigned(static_cast<unsigned>(tm.tm_hour), 2);
  a.AddUnsigned(static_cast<unsigned>(tm.tm_min), 2);
  a.AddUnsigned(static_cast<unsigned>(tm.tm_sec), 2);
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
  // Insert ".NNNN" before a trailing ".pb.gz" (or at the end).
  std::size_t length = a.size();
  static constexpr char kExtension[] = ".pb.gz";
  constexpr std::size_t kExtensionLength = sizeof(kExtension) - 1;
  std::size_t insert_at = length;
  if (length >= kExtensionLength && std::strcmp(out + length - kExtensionLength, kExtension) == 0) {
    insert_at = length - kExtensionLength;
  }
  char suffix[PATH_MAX];
  std::size_t suffix_length = length - insert_at;
  std::memcpy(suffix, out + insert_at, suffix_length + 1);
  Appender tail(out + insert_at, capacity - insert_at);
  tail.Add(".");
  tail.AddUnsigned(sequence, 4);
  tail.Add(suffix, suffix_length);
  return tail.Finish();
}

int WriteProfileFile(const char* path, const HeapSnapshot& snapshot,
                     const ProfileMetadata& metadata, MemoryResource& memory) {
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
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = open(temporary, kFlags, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Left by an earlier process with the same pid that died mid-dump. Unlinking removes the name
    // only (a planted symlink, never its target), then O_EXCL creates afresh.
    unlink(temporary);
    fd = open(temporary, kFlags, 0600);
  }
  if (fd < 0) return errno;
  int error = 0;
  errno = 0;
  {
    GzipFileSink sink(fd, memory);
    if (!sink.ok() || !WriteHeapProfile(snapshot, metadata, memory, sink) || !sink.Finish()) {
      error = errno != 0 ? errno : EIO;
    }
  }
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(temporary, path) != 0) error = errno;
  if (error != 0) unlink(temporary);
  return error;
}

void AppendToManifest(const char* manifest, int pid, const char* reason, const char* path) {
  char line[PATH_MAX + 64];
  Appender a(line, sizeof(line));
  a.AddUnsigned(static_cast<unsigned long long>(pid), 1);
  a.Add("\t");
  a.Add(reason);
  a.Add("\t");
  a.Add(path);
  a.Add("\n");
  if (!a.Finish()) return;
  int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, a.size());
  (void)ignored;
  close(fd);
}

}  // namespace heaprec
