// The exec family, interposed so that exec never cuts a dump in half. exec ends every thread but
// the caller's at once: a dump the dump thread was writing would leave its temporary file behind,
// and a peak profile half-rewritten. So the calling thread waits for dumps in progress (taking the
// dump locks) and holds them across the real call; if exec fails, it lets them go. A vfork child
// shares its parent's memory and must not take them (they would stay taken in the parent).
//
// The serving process of HEAPREC_HTTP took the variable out of its environment at start-up (so that
// its other children do not try its address); its own exec puts it back, in a copy of the
// environment on the caller's stack, so that the new program serves again (http/server.h).
#include <alloca.h>
#include <stdarg.h>
#include <unistd.h>

#include "preload/alloc/sampling.h"
#include "preload/dump/dump.h"
#include "preload/dump/peak.h"
#include "preload/export.h"
#include "preload/http/server.h"
#include "preload/process/endings.h"
#include "preload/process/next_symbol.h"
#include "preload/process/own_process.h"
#include "preload/record/heap_record.h"
#include "preload/thread_state.h"

extern char** environ;

namespace heaprec::preload {
namespace {

using ExecveFn = int (*)(const char*, char* const*, char* const*);
using ExecvFn = int (*)(const char*, char* const*);
NextSymbol<ExecveFn> g_real_execve{"execve"}, g_real_execvpe{"execvpe"};
NextSymbol<ExecvFn> g_real_execv{"execv"}, g_real_execvp{"execvp"};
NextSymbol<int (*)(int, char* const*, char* const*)> g_real_fexecve{"fexecve"};
NextSymbol<int (*)(int, const char*, char* const*, char* const*, int)> g_real_execveat{"execveat"};

// Holds the dump locks for the duration of an exec call, as a thread inside heaprec: a signal
// that would end the process meanwhile is deferred (its final dump needs these locks) until the
// locks are let go, which happens only if exec fails. A vfork child touches nothing: even the
// thread's "inside heaprec" mark is its parent's (same memory, same thread-local storage).
class DumpsHeldForExec {
 public:
  DumpsHeldForExec() : held_(!t_state.in_hook && InOwnProcess() && IsActive()) {
    if (!held_) return;
    t_state.in_hook = true;
    LockDumps();
    // The image goes, and with it what the record describes, its peak copy included: a peak the
    // dump thread has not written yet (it waits while the record keeps it, or it has not run yet)
    // is written now. (If exec fails, the process goes on without a record file: a kill later
    // leaves only its peak profile, as before records.)
    WritePeakBeforeExec();
    EndHeapRecord();
  }
  ~DumpsHeldForExec() {  // exec failed: the process goes on
    if (!held_) return;
    UnlockDumps();
    t_state.in_hook = false;
    if (t_state.deferred_count != 0 || t_state.deferred_signal != 0) LeaveHeaprec();
  }
  DumpsHeldForExec(const DumpsHeldForExec&) = delete;
  DumpsHeldForExec& operator=(const DumpsHeldForExec&) = delete;

 private:
  bool held_;
};

// execl-style arguments, up to the terminating null, as an argv array on the caller's stack.
#define HEAPREC_COLLECT_ARGV(first, args, argv)                      \
  do {                                                               \
    va_list count_args;                                              \
    va_copy(count_args, args);                                       \
    int count = 1;                                                   \
    while (va_arg(count_args, char*) != nullptr) ++count;            \
    va_end(count_args);                                              \
    argv = static_cast<char**>(alloca((count + 1) * sizeof(char*))); \
    argv[0] = const_cast<char*>(first);                              \
    for (int i = 1; i <= count; ++i) argv[i] = va_arg(args, char*);  \
  } while (0)

// `envp` with the HTTP endpoint's variables added when the caller is the serving process (see
// HttpVariablesForExec), as an array on the caller's stack; else `envp` itself.
#define HEAPREC_EXEC_ENVIRONMENT(envp, out)                                                      \
  do {                                                                                           \
    const char* extra[2];                                                                        \
    std::size_t extra_count = HttpVariablesForExec(envp, extra);                                 \
    out = const_cast<char* const*>(envp);                                                        \
    if (extra_count == 0) break;                                                                 \
    std::size_t count = 0;                                                                       \
    while (envp != nullptr && envp[count] != nullptr) ++count;                                   \
    auto** copy = static_cast<char**>(alloca((count + extra_count + 1) * sizeof(char*)));        \
    for (std::size_t i = 0; i < count; ++i) copy[i] = envp[i];                                   \
    for (std::size_t i = 0; i < extra_count; ++i) copy[count + i] = const_cast<char*>(extra[i]); \
    copy[count + extra_count] = nullptr;                                                         \
    out = copy;                                                                                  \
  } while (0)

}  // namespace
}  // namespace heaprec::preload

using heaprec::preload::DumpsHeldForExec;
using namespace heaprec::preload;

HEAPREC_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  char* const* env;
  HEAPREC_EXEC_ENVIRONMENT(envp, env);
  DumpsHeldForExec hold;
  return g_real_execve.get()(path, argv, env);
}
// execv and execvp pass `environ`: when it needs the HTTP variables back, through execve/execvpe.
HEAPREC_EXPORT int execv(const char* path, char* const argv[]) {
  char* const* env;
  HEAPREC_EXEC_ENVIRONMENT(environ, env);
  DumpsHeldForExec hold;
  if (env != environ) return g_real_execve.get()(path, argv, env);
  return g_real_execv.get()(path, argv);
}
HEAPREC_EXPORT int execvp(const char* file, char* const argv[]) {
  char* const* env;
  HEAPREC_EXEC_ENVIRONMENT(environ, env);
  DumpsHeldForExec hold;
  if (env != environ) return g_real_execvpe.get()(file, argv, env);
  return g_real_execvp.get()(file, argv);
}
HEAPREC_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  char* const* env;
  HEAPREC_EXEC_ENVIRONMENT(envp, env);
  DumpsHeldForExec hold;
  return g_real_execvpe.get()(file, argv, env);
}
HEAPREC_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  char* const* env;
  HEAPREC_EXEC_ENVIRONMENT(envp, env);
  DumpsHeldForExec hold;
  return g_real_fexecve.get()(fd, argv, env);
}
HEAPREC_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[],
                            int flags) {
  char* const* env;
  HEAPREC_EXEC_ENVIRONMENT(envp, env);
  DumpsHeldForExec hold;
  return g_real_execveat.get()(dirfd, path, argv, env, flags);
}
HEAPREC_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  char** argv;
  HEAPREC_COLLECT_ARGV(arg, args, argv);
  va_end(args);
  return execv(path, argv);
}
HEAPREC_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  char** argv;
  HEAPREC_COLLECT_ARGV(arg, args, argv);
  va_end(args);
  return execvp(file, argv);
}
HEAPREC_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list args;
  va_start(args, arg);
  char** argv;
  HEAPREC_COLLECT_ARGV(arg, args, argv);
  char* const* envp = va_arg(args, char* const*);  // after the terminating null
  va_end(args);
  return execve(path, argv, envp);
}
