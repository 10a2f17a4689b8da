#include "core/manifest_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "core/appender.h"
#include "core/own_descriptors.h"
#include "schema/manifest.h"

namespace heaprec {

void AppendToManifest(const char* manifest, int pid, const char* reason, const char* path) {
  char line[PATH_MAX + 64];
  Appender a(line, sizeof(line));
  a.AddUnsigned(static_cast<unsigned long long>(pid), 1);
  a.Add(&schema::kManifestSeparator, 1);
  a.Add(reason);
  a.Add(&schema::kManifestSeparator, 1);
  a.Add(path);
  a.Add("\n");
  if (!a.Finish()) return;
  int fd = OpenOwn(manifest, O_WRONLY | O_APPEND | O_NOFOLLOW, 0);
  if (fd < 0) return;
  ssize_t ignored = write(fd, line, a.size());
  (void)ignored;
  close(fd);
}

}  // namespace heaprec
