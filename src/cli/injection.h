// The ptrace side of `heaprec attach`, `detach` and `dump` (docs/design/attach.md): one session
// on one thread of the target, in which heaprec's library is loaded if it is not yet, a directory
// descriptor is handed over, and heaprec_attach_command is called (schema/attach.h).
//
//   Begin      picks a thread at a safe point (blocked in a system call that holds no lock of
//              glibc's, or running outside glibc, the loader and heaprec), seizes only it, writes
//              the frame it can always restore itself from (ptrace_thread.h), maps scratch
//              memory there with the routine calls return through, blocks its asynchronous
//              signals, saves its errno
//   Load       memfd_create in the target, the library's bytes written through /proc/PID/fd,
//              dlopen("/proc/self/./fd/N") there: nothing of the attaching machine's file system
//              needs to exist in the target's
//   HandOver   a socketpair made in the target, one end taken with pidfd_getfd, the descriptor sent
//              over it with SCM_RIGHTS: the target receives a directory it can write into
//              whatever its mount namespace
//   Command    heaprec_attach_command(request)
//   End        closes what it made, puts errno, the signal mask and every register back, detaches
//
// End runs on every path (the destructor too): whatever failed, and however the user interrupted,
// the target is left as it was found, with the library at most loaded and idle. If `heaprec
// attach` itself is killed, the thread restores itself from the frame; what the session had made
// stays (the scratch mapping, a descriptor or two, close-on-exec).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cli/ptrace_thread.h"
#include "cli/remote_process.h"
#include "schema/attach.h"

namespace heaprec::cli {

class Injection {
 public:
  explicit Injection(pid_t pid) : process_(pid) {}
  ~Injection() { End(); }

  bool Begin(std::string* error);
  // Loads the library at `library_path` (a file on this machine) unless it is loaded already.
  bool Load(const std::string& library_path, std::string* error);
  // Hands `fd` over; the target's end to name in the request, or -1 with `error`.
  int HandOver(int fd, std::string* error);
  // Calls heaprec_attach_command with `request` (its handover_fd and library_handle are filled in
  // here). The AttachResult, or -1 with `error`.
  int Command(schema::AttachRequest request, std::string* error);
  void End();

  pid_t held_thread() const { return tid_; }
  // Whether the process was stopped (SIGSTOP) when its thread was seized: its dump thread cannot
  // run until it is continued.
  bool found_stopped() const { return found_stopped_; }
  std::uint64_t stopped_ns() const { return stopped_ns_; }  // how long the thread was held

 private:
  bool Call(const char* function, const std::vector<std::uint64_t>& args, std::uint64_t* result,
            std::string* error);
  bool CallAt(std::uint64_t address, const std::vector<std::uint64_t>& args, std::uint64_t* result,
              std::string* error);
  // glibc's __restore_rt in the process's libc text, or 0.
  std::uint64_t FindSignalReturn() const;
  // `wait_channel`: the thread's, read before it was stopped (RemoteProcess::WaitChannel).
  bool IsSafePoint(const user_regs_struct& regs, const std::string& wait_channel) const;
  bool SeizeSafeThread(std::string* error);

  RemoteProcess process_;
  std::vector<Mapping> maps_;
  PtraceThread thread_;
  pid_t tid_ = 0;
  bool begun_ = false;
  bool found_stopped_ = false;
  std::uint64_t libc_ = 0;
  std::uint64_t scratch_ = 0;
  std::uint64_t return_routine_ = 0;  // in the scratch, once written and made executable
  std::uint64_t errno_address_ = 0;
  int saved_errno_ = 0;
  bool mask_saved_ = false;
  std::uint64_t handle_ = 0;
  int handover_[2] = {-1, -1};
  std::uint64_t begin_ns_ = 0, stopped_ns_ = 0;
};

// The load address of heaprec's library in a process's mappings (LD_PRELOAD'ed or injected), or 0.
std::uint64_t HeaprecLibraryBase(const std::vector<Mapping>& maps);

}  // namespace heaprec::cli
