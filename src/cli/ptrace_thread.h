// One thread of another process held with ptrace, to run calls on it (docs/design/attach.md).
//
// PTRACE_SEIZE, then PTRACE_INTERRUPT: only this thread stops; the others run on, so whatever lock
// one of them holds (malloc's, the loader's) is let go and the calls made here can take it. Its
// registers and extended state (NT_X86_XSTATE) are saved at the stop and put back exactly at the
// end, orig_rax included: a system call it was blocked in restarts as the kernel would have
// restarted it after any stop. During the calls orig_rax is -1 (no restart of our registers).
//
// The thread survives the death of its tracer at any moment (`kill -9` of `heaprec attach`, the
// OOM killer): the kernel then lets it run from wherever it is, so before its first instruction
// is changed, a signal frame is written below its red zone that holds everything it was (its
// registers, with an interrupted system call set to be issued again; its extended state; its
// signal mask), and every call returns into code that ends in rt_sigreturn on that frame: libc's
// own signal-return routine, or a routine the caller wrote (Injection's, which keeps the result
// first). The tracer learns that a call is done at that rt_sigreturn's syscall-entry stop
// (PTRACE_SYSCALL) and skips it; a thread whose tracer is gone executes it and is itself again.
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

  // Writes the frame on the thread's stack, with `signal_return` (libc's routine: mov $15,%rax;
  // syscall) as the way back to it. Must come before the first Call.
  bool PrepareReturn(std::uint64_t signal_return, std::string* error);
  std::uint64_t signal_return() const { return signal_return_; }
  // 256 bytes of the thread's stack above the frame, which no call overwrites: arguments.
  std::uint64_t argument_area() const { return argument_area_; }

  // Calls the function at `address` with up to six integer arguments on the thread, returning to
  // `return_address` (signal_return() or code that ends in the same rt_sigreturn). The result is
  // read from `result_address` when it is not 0, else it is the value of the last system call the
  // function made (a system call's wrapper). False on a fault or a timeout (`error` says which).
  bool Call(std::uint64_t address, const std::vector<std::uint64_t>& args,
            std::uint64_t return_address, std::uint64_t result_address, std::uint64_t* result,
            std::string* error, int timeout_ms = 10000);

  // Puts back the saved registers and state, lets the thread go. Idempotent.
  void RestoreAndDetach();

 private:
  bool WaitStop(int* status, int timeout_ms);
  bool WriteFrame(std::uint64_t signal_return, std::string* error);

  pid_t tid_ = 0;
  bool held_ = false;
  bool group_stop_ = false;     // the thread was stopped by a group stop when seized
  bool at_return_ = false;      // stopped at the entry of the frame's rt_sigreturn
  bool frame_written_ = false;  // every instruction from here on leads back to the frame
  user_regs_struct saved_ = {};
  std::vector<unsigned char> xstate_;
  std::uint64_t signal_return_ = 0;
  std::uint64_t frame_ = 0;  // where the return address of a call goes; the frame starts there
  std::uint64_t argument_area_ = 0;
};

}  // namespace heaprec::cli
