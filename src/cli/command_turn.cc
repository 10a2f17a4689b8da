#include "cli/command_turn.h"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace heaprec::cli {

CommandTurn::CommandTurn(const RemoteProcess& process)
    : fd_(open(process.ProcPath("stat").c_str(), O_RDONLY | O_CLOEXEC)) {}

CommandTurn::~CommandTurn() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

bool CommandTurn::Wait(int timeout_ms, const std::function<bool()>& interrupted) {
  if (fd_ < 0) return true;
  constexpr int kPollMs = 10;
  for (int waited = 0; waited <= timeout_ms; waited += kPollMs) {
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return true;  // no locks here: go on unguarded
    if (interrupted()) return false;
    timespec pause = {0, kPollMs * 1000000L};
    nanosleep(&pause, nullptr);
  }
  return false;
}

}  // namespace heaprec::cli
