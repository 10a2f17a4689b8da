#include "core/manifest_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "core/appender.h"
#include "core/own_descriptors.h"
#include "schema/manifest.h"

namespace heaprec {

bool AppendToManifest(const char* manifest, int pid, const char* reason, const char* path) {
  char line[PATH_MAX + 64];
  Appender a(line, sizeof(line));
  a.AddUnsigned(static_cast<unsigned long long>(pid), 1);
  a.Add(&schema::kManifestSeparator, 1);
  a.Add(reason);
  a.Add(&schema::kManifestSeparator, 1);
  a.Add(path);
  a.Add("\n");
  if (!a.Finish()) return false;
  int fd = OpenOwn(manifest, O_WRONLY | O_APPEND | O_NOFOLLOW, 0);
  if (fd < 0) return false;
  bool written = write(fd, line, a.size()) == static_cast<ssize_t>(a.size());
  close(fd);
  return written;
}

bool AppendTextToManifest(const char* manifest, int pid, const char* reason,
                          const char* const* parts, std::size_t count) {
  char text[1024];
  std::size_t length = 0;
  for (std::size_t i = 0; i < count; ++i) {
    for (const char* p = parts[i]; *p != '\0' && length + 1 < sizeof(text); ++p) {
      if (*p != '\n') text[length++] = *p == '\t' ? ' ' : *p;
    }
  }
  text[length] = '\0';
  return AppendToManifest(manifest, pid, reason, text);
}

}  // namespace heaprec
