// setuid and its relatives, interposed so that a process that drops privileges after start-up
// (nginx and Apache workers switch to an unprivileged user) can still write its profiles.
//
// Just before a privileged process (effective uid 0) switches its effective uid to another user,
// while it still may, heaprec prepares for that user: it creates heaprec-uid<N>/ in the output
// directory, owned by the new user (mode 0700), where profiles go that the new user may not write
// at their usual place, and it hands the `heaprec run` manifest to the new user, so that the
// worker's profiles are listed. The call itself is the real one, unchanged. A program the worker
// execs later finds the directory at start-up (UseFallbackDirectoryIfPrepared). Nothing is created
// when the new user can write the output directory itself.
#include "preload/process/identity_hooks.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/appender.h"
#include "preload/alloc/sampling.h"
#include "preload/dump/profile_writer.h"
#include "preload/export.h"
#include "preload/process/next_symbol.h"
#include "preload/state.h"
#include "preload/thread_state.h"

namespace heaprec::preload {
namespace {

NextSymbol<int (*)(uid_t)> g_real_setuid{"setuid"}, g_real_seteuid{"seteuid"};
NextSymbol<int (*)(uid_t, uid_t)> g_real_setreuid{"setreuid"};
NextSymbol<int (*)(uid_t, uid_t, uid_t)> g_real_setresuid{"setresuid"};

// The directory part of the output template, or false when it depends on the pid or time.
bool OutputDirectory(char* out, std::size_t capacity) {
  const char* slash = strrchr(g_settings.output_template, '/');
  if (slash == nullptr) return false;
  std::size_t length = static_cast<std::size_t>(slash - g_settings.output_template);
  if (length == 0 || length >= capacity) return false;
  memcpy(out, g_settings.output_template, length);
  out[length] = '\0';
  return strchr(out, '%') == nullptr;
}

// From the mode bits: whether `uid` (with group `gid`) may create files in `st`'s directory.
bool MayWrite(const struct stat& st, uid_t uid, gid_t gid) {
  mode_t bits = st.st_uid == uid   ? (st.st_mode >> 6)
                : st.st_gid == gid ? (st.st_mode >> 3)
                                   : st.st_mode;
  return (bits & 3) == 3;  // write and search
}

void PrepareForUser(uid_t uid) {
  if (uid == static_cast<uid_t>(-1) || uid == 0 || geteuid() != 0 || !IsActive()) return;
  HookGuard guard;
  int saved_errno = errno;
  const gid_t gid = getegid();  // a worker sets its group first
  char directory[PATH_MAX], fallback[PATH_MAX];
  struct stat st;
  if (OutputDirectory(directory, sizeof(directory)) && stat(directory, &st) == 0 &&
      !MayWrite(st, uid, gid) &&
      FallbackDirectoryPath(directory, uid, fallback, sizeof(fallback))) {
    bool ready = mkdir(fallback, 0700) == 0
                     ? chown(fallback, uid, gid) == 0
                     : lstat(fallback, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid;
    if (ready) SetFallbackDirectory(fallback);
  }
  if (g_settings.manifest[0] != '\0') {
    int ignored = chown(g_settings.manifest, uid, static_cast<gid_t>(-1));
    (void)ignored;
  }
  errno = saved_errno;
}

}  // namespace

bool FallbackDirectoryPath(const char* output_directory, uid_t uid, char* out,
                           std::size_t capacity) {
  Appender path(out, capacity);
  path.Add(output_directory);
  path.Add("/heaprec-uid");
  path.AddUnsigned(uid, 1);
  return path.Finish();
}

bool UseFallbackDirectoryIfPrepared(const char* output_directory) {
  char fallback[PATH_MAX];
  struct stat st;
  if (!FallbackDirectoryPath(output_directory, geteuid(), fallback, sizeof(fallback)) ||
      lstat(fallback, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
      access(fallback, W_OK | X_OK) != 0) {
    return false;
  }
  SetFallbackDirectory(fallback);
  return true;
}

}  // namespace heaprec::preload

using heaprec::preload::PrepareForUser;

HEAPREC_EXPORT int setuid(uid_t uid) {
  PrepareForUser(uid);
  return heaprec::preload::g_real_setuid.get()(uid);
}
HEAPREC_EXPORT int seteuid(uid_t uid) {
  PrepareForUser(uid);
  return heaprec::preload::g_real_seteuid.get()(uid);
}
HEAPREC_EXPORT int setreuid(uid_t real, uid_t effective) {
  PrepareForUser(effective);
  return heaprec::preload::g_real_setreuid.get()(real, effective);
}
HEAPREC_EXPORT int setresuid(uid_t real, uid_t effective, uid_t saved) {
  PrepareForUser(effective);
  return heaprec::preload::g_real_setresuid.get()(real, effective, saved);
}
