#include "preload/dump_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "preload/profiler.h"
#include "preload/thread_state.h"

namespace heaprec::preload {
namespace {

int g_wake_pipe[2] = {-1, -1};

void OnDumpSignal(int) {
  int saved_errno = errno;
  char byte = 's';
  ssize_t ignored =
      write(g_wake_pipe[1], &byte, 1);  // non-blocking: a full pipe already means "dump"
  (void)ignored;
  errno = saved_errno;
}

void* DumpLoop(void*) {
  // Dump() marks the thread as inside heaprec while it works; between dumps it allocates nothing.
  const std::uint64_t interval_ms = DumpIntervalMs();
  const int timeout =
      interval_ms == 0 ? -1 : static_cast<int>(interval_ms > 0x7fffffff ? 0x7fffffff : interval_ms);
  for (;;) {
    pollfd pfd = {g_wake_pipe[0], POLLIN, 0};
    int ready = poll(&pfd, 1, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return nullptr;
    }
    if (ready > 0) {
      char drain[64];
      while (read(g_wake_pipe[0], drain, sizeof(drain)) > 0) {
      }
      Dump(DumpReason::kSignal, nullptr);
    } else {
      Dump(DumpReason::kInterval, nullptr);
    }
  }
}

}  // namespace

void StartDumpThread() {
  const int signal_number = DumpSignal();
  if (DumpIntervalMs() == 0 && signal_number == 0) return;
  if (pipe2(g_wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);  // the new thread inherits "everything blocked"
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&thread, &attr, DumpLoop, nullptr);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (rc != 0) return;
  if (signal_number != 0) {
    struct sigaction action = {};
    action.sa_handler = OnDumpSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace heaprec::preload
