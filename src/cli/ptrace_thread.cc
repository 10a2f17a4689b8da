#include "cli/ptrace_thread.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include <cstring>

namespace heaprec::cli {
namespace {

constexpr std::size_t kXstateBytes = 16384;  // larger than any x86-64 XSAVE area today

void PauseMs(int ms) {
  timespec t = {0, ms * 1000000L};
  nanosleep(&t, nullptr);
}

bool IsEventStop(int status) { return (status >> 16) == PTRACE_EVENT_STOP; }

}  // namespace

PtraceThread::~PtraceThread() { RestoreAndDetach(); }

bool PtraceThread::WaitStop(int* status, int timeout_ms) {
  for (int waited = 0;; ++waited) {
    pid_t got = waitpid(tid_, status, __WALL | WNOHANG);
    if (got == tid_) return true;
    if (got < 0 && errno != EINTR) return false;
    if (waited >= timeout_ms) {
      errno = ETIMEDOUT;
      return false;
    }
    PauseMs(1);
  }
}

bool PtraceThread::Seize(pid_t tid, std::string* error) {
  tid_ = tid;
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    *error = std::strerror(errno);
    return false;
  }
  held_ = true;
  int status = 0;
  if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0 || !WaitStop(&status, 2000) ||
      !WIFSTOPPED(status)) {
    int saved = errno;
    *error = WIFEXITED(status) || WIFSIGNALED(status) ? "the thread ended" : std::strerror(saved);
    if (WIFEXITED(status) || WIFSIGNALED(status)) held_ = false;
    RestoreAndDetach();
    errno = saved;
    return false;
  }
  // A group-stopped thread reports the stop signal with PTRACE_EVENT_STOP; an interrupted running
  // one reports SIGTRAP with it. A signal that arrived first is a signal-delivery-stop: it must be
  // delivered as it would have been, so let it go and stop again.
  while (!IsEventStop(status)) {
    int signal_number = WSTOPSIG(status);
    if (ptrace(PTRACE_CONT, tid, nullptr,
               reinterpret_cast<void*>(static_cast<long>(signal_number))) != 0 ||
        !WaitStop(&status, 2000) || !WIFSTOPPED(status)) {
      *error = "the thread did not stop";
      RestoreAndDetach();
      return false;
    }
  }
  group_stop_ = WSTOPSIG(status) != SIGTRAP;
  xstate_.assign(kXstateBytes, 0);
  iovec xstate = {xstate_.data(), xstate_.size()};
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &saved_) != 0 ||
      ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &xstate) != 0) {
    *error = std::strerror(errno);
    ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    held_ = false;
    return false;
  }
  xstate_.resize(xstate.iov_len);
  return true;
}

void PtraceThread::Release() {
  if (!held_) return;
  ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
  held_ = false;
}

bool PtraceThread::Call(std::uint64_t address, const std::vector<std::uint64_t>& args,
                        std::uint64_t* result, std::string* error, int timeout_ms) {
  user_regs_struct regs = saved_;
  // Below the red zone and whatever the thread's frame holds, 16-byte aligned at the call.
  std::uint64_t sp = ((saved_.rsp - 1024) & ~std::uint64_t{15}) - 8;
  long zero = 0;
  if (ptrace(PTRACE_POKEDATA, tid_, reinterpret_cast<void*>(sp), reinterpret_cast<void*>(zero)) !=
      0) {
    *error = "cannot write the thread's stack: " + std::string(std::strerror(errno));
    return false;
  }
  unsigned long long* slots[] = {&regs.rdi, &regs.rsi, &regs.rdx, &regs.rcx, &regs.r8, &regs.r9};
  for (std::size_t i = 0; i < args.size() && i < 6; ++i) *slots[i] = args[i];
  regs.rsp = sp;
  regs.rip = address;
  regs.rax = 0;                                         // no vector registers for a variadic callee
  regs.orig_rax = static_cast<unsigned long long>(-1);  // nothing to restart
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0) {
    *error = std::strerror(errno);
    return false;
  }
  int pending_signal = 0;
  for (;;) {
    if (ptrace(PTRACE_CONT, tid_, nullptr,
               reinterpret_cast<void*>(static_cast<long>(pending_signal))) != 0) {
      *error = std::strerror(errno);
      return false;
    }
    pending_signal = 0;
    int status = 0;
    if (!WaitStop(&status, timeout_ms)) {
      *error = errno == ETIMEDOUT ? "the call did not return in time" : std::strerror(errno);
      return false;
    }
    if (!WIFSTOPPED(status)) {
      *error = "the process ended";
      held_ = false;
      return false;
    }
    if (IsEventStop(status)) continue;  // a group stop: ours goes on, the kernel re-stops later
    int signal_number = WSTOPSIG(status);
    user_regs_struct now;
    ptrace(PTRACE_GETREGS, tid_, nullptr, &now);
    if (signal_number == SIGSEGV && now.rip == 0) {  // returned to our address 0
      *result = now.rax;
      return true;
    }
    if (signal_number == SIGSEGV || signal_number == SIGBUS || signal_number == SIGILL ||
        signal_number == SIGFPE) {
      *error = std::string("the call faulted (SIG") + sigabbrev_np(signal_number) + ")";
      return false;
    }
    pending_signal = signal_number;  // anything else is the program's: delivered as it came
  }
}

void PtraceThread::RestoreAndDetach() {
  if (!held_) return;
  iovec xstate = {xstate_.data(), xstate_.size()};
  ptrace(PTRACE_SETREGS, tid_, nullptr, &saved_);
  if (!xstate_.empty())
    ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &xstate);
  ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
  held_ = false;
}

}  // namespace heaprec::cli
