// heaprec's messages from inside the profiled process: one line each, without stdio, never where
// the program pointed its stderr after start-up, never a SIGPIPE (messages.h).
#include "preload/messages.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/manifest_writer.h"
#include "preload/state.h"
#include "schema/manifest.h"

namespace heaprec::preload {

void WriteStderr(const char* const* parts, std::size_t count) {
  // A write to a closed pipe raises SIGPIPE, which would kill the program for heaprec's sake: keep
  // it blocked meanwhile and take back one that this write raised (one already pending stays).
  int saved_errno = errno;
  sigset_t pipe_only, previous, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  bool broken = false;
  for (std::size_t i = 0; i < count && !broken; ++i) {
    broken = write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0 && errno == EPIPE;
  }
  if (broken && !was_pending) {
    timespec no_wait = {0, 0};
    sigtimedwait(&pipe_only, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = saved_errno;
}

namespace {

struct FileIdentity {
  bool open;
  dev_t device;
  ino_t inode;
};
FileIdentity g_startup_stderr = {};  // set once at start-up

FileIdentity IdentityOfStderr() {
  struct stat st;
  if (fstat(STDERR_FILENO, &st) != 0) return {false, 0, 0};
  return {true, st.st_dev, st.st_ino};
}

}  // namespace

void RememberStderr() { g_startup_stderr = IdentityOfStderr(); }

void ReportMessage(const char* const* parts, std::size_t count) {
  FileIdentity now = IdentityOfStderr();
  if (g_startup_stderr.open && now.open && now.device == g_startup_stderr.device &&
      now.inode == g_startup_stderr.inode) {
    WriteStderr(parts, count);
    return;
  }
  if (g_settings.manifest[0] == '\0') return;
  AppendTextToManifest(g_settings.manifest, getpid(), schema::kManifestMessage, parts, count);
}

}  // namespace heaprec::preload
