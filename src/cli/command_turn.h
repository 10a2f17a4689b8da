// heaprec's commands on one process (attach, dump, detach) take turns. Each reads what the process
// holds (heaprec's control block, or none), then acts on it: two attaches started together both
// found no heaprec, both loaded it, and the process ran three copies of the library, each saying
// "samples now", one of them the copy a later detach reached. The turn is an exclusive flock(2) on
// the process's /proc/PID/stat, which every command in the same pid namespace opens as the same
// file (by any user who may read it), and which goes away with the process.
#pragma once

#include <functional>

#include "cli/remote_process.h"

namespace heaprec::cli {

class CommandTurn {
 public:
  explicit CommandTurn(const RemoteProcess& process);
  ~CommandTurn();
  CommandTurn(const CommandTurn&) = delete;
  CommandTurn& operator=(const CommandTurn&) = delete;

  // Waits until no other heaprec command works on the process, up to `timeout_ms` or until
  // `interrupted()` says to stop; false then. True at once when the file cannot be opened (the
  // process is gone: the command says so itself).
  bool Wait(int timeout_ms, const std::function<bool()>& interrupted);

 private:
  int fd_ = -1;
};

}  // namespace heaprec::cli
