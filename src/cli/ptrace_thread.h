// One thread of another process held with ptrace, to run calls on it (docs/design/attach.md).
//
// PTRACE_SEIZE, then PTRACE_INTERRUPT: only this thread stops; the others run on, so whatever lock
// one of them holds (malloc's, the loader's) is let go and the calls made here can take it. Its
// registers and extended state (NT_X86_XSTATE) are saved at the stop and put back exactly at the
// end, orig_rax included: a system call it was blocked in restarts as the kernel would have
// restarted it after any stop. During the calls, orig_rax is -1 (no restart of our registers), the
// return address is 0 (the call ends in a SIGSEGV at address 0, which the tracer takes and never
// delivers), and every signal but the synchronous ones is blocked on the thread, so no handler of
// the program runs inside heaprec's calls; a group stop (SIGSTOP) that arrives meanwhile is let
// through and the thread is put back into it at the detach (the kernel does, __ptrace_unlink).
//
// No PTRACE_O_EXITKILL: if `heaprec attach` dies, the target must not.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <string>
#include <vector>

namespace heaprec::cli {

class PtraceThread {
 public:
  PtraceThread() = default;
  PtraceThread(const PtraceThread&) = delete;
  PtraceThread& operator=(const PtraceThread&) = delete;
  ~PtraceThread();  // restores and detaches if still held

  // Seizes and stops `tid`; false with errno (EPERM: no permission, ESRCH: gone) and `error`.
  bool Seize(pid_t tid, std::string* error);
  // Resumes the thread after Seize without having changed it.
  void Release();

  const user_regs_struct& saved() const { return saved_; }
  bool in_group_stop() const { return group_stop_; }

  // Calls the function at `address` with up to six integer arguments on the thread; false on a
  // fault or a timeout (`error` says which). The result in *result.
  bool Call(std::uint64_t address, const std::vector<std::uint64_t>& args, std::uint64_t* result,
            std::string* error, int timeout_ms = 10000);

  // Puts back the saved registers and state, lets the thread go. Idempotent.
  void RestoreAndDetach();

 private:
  bool WaitStop(int* status, int timeout_ms);

  pid_t tid_ = 0;
  bool held_ = false;
  bool group_stop_ = false;  // the thread was stopped by a group stop when seized
  user_regs_struct saved_ = {};
  std::vector<unsigned char> xstate_;
};

}  // namespace heaprec::cli
