#include "cli/ptrace_thread.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include <cstdlib>
#include <cstring>

#include "cli/remote_process.h"

namespace heaprec::cli {
namespace {

constexpr std::size_t kXstateBytes = 16384;  // larger than any x86-64 XSAVE area today
constexpr std::uint64_t kRedZone = 128;
constexpr std::uint64_t kArgumentBytes = 256;

// The kernel's values for a system call interrupted by a stop (include/linux/errno.h, not uapi).
constexpr long kRestartSys = -512, kRestartNoIntr = -513, kRestartNoHand = -514,
               kRestartBlock = -516;

// What rt_sigreturn reads at the stack pointer minus 8 on x86-64: struct rt_sigframe up to the
// siginfo (arch/x86/include/asm/sigframe.h, uapi asm/sigcontext.h, asm/ucontext.h).
struct SignalFrame {
  std::uint64_t return_address;  // pretcode: the slot a call returns through
  std::uint64_t uc_flags, uc_link;
  std::uint64_t ss_sp;
  std::int32_t ss_flags;
  std::uint32_t ss_pad;
  std::uint64_t ss_size;
  std::uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip,
      eflags;
  std::uint16_t cs, gs, fs, ss;
  std::uint64_t err, trapno, oldmask, cr2, fpstate, reserved[8];
  std::uint64_t sigmask;
  unsigned char siginfo[128];
};
static_assert(sizeof(SignalFrame) == 440, "the kernel's rt_sigframe");

constexpr std::uint64_t kUcFlags =
    0x1 | 0x2 | 0x4;  // UC_FP_XSTATE, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS
// Not a mode sigaltstack accepts: restore_altstack then leaves the thread's alternate stack as
// it is (do_sigaltstack fails with EINVAL, which rt_sigreturn ignores).
constexpr std::int32_t kAltstackUnchanged = 4;

// The software-reserved bytes of an XSAVE area in a signal frame (uapi asm/sigcontext.h): without
// them the kernel restores the legacy x87/SSE part only.
constexpr std::uint32_t kXstateMagic1 = 0x46505853, kXstateMagic2 = 0x46505845;
constexpr std::size_t kSoftwareBytesOffset = 464;

bool IsEventStop(int status) { return (status >> 16) == PTRACE_EVENT_STOP; }
bool IsSyscallStop(int status) { return WSTOPSIG(status) == (SIGTRAP | 0x80); }

// Test seam: HEAPREC_ATTACH_KILL_AT=N kills `heaprec attach` with SIGKILL at the Nth resume or
// stop of the thread, the way `kill -9` or the OOM killer would (tests/attach: scenario killed).
void KillPoint() {
  static long countdown = [] {
    const char* at = std::getenv("HEAPREC_ATTACH_KILL_AT");
    return at != nullptr ? std::atol(at) : 0L;
  }();
  if (countdown > 0 && --countdown == 0) raise(SIGKILL);
}

}  // namespace

PtraceThread::~PtraceThread() { RestoreAndDetach(); }

bool PtraceThread::WaitStop(int* status, int timeout_ms) {
  // Most stops come within microseconds (a system call's): a short pause first, longer later.
  std::uint64_t waited_us = 0, pause_us = 5;
  for (;;) {
    pid_t got = waitpid(tid_, status, __WALL | WNOHANG);
    if (got == tid_) {
      KillPoint();
      return true;
    }
    if (got < 0 && errno != EINTR) return false;
    if (waited_us >= static_cast<std::uint64_t>(timeout_ms) * 1000) {
      errno = ETIMEDOUT;
      return false;
    }
    timespec t = {0, static_cast<long>(pause_us * 1000)};
    nanosleep(&t, nullptr);
    waited_us += pause_us;
    if (pause_us < 1000) pause_us *= 2;
  }
}

bool PtraceThread::Seize(pid_t tid, std::string* error) {
  tid_ = tid;
  if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(PTRACE_O_TRACESYSGOOD)) != 0) {
    *error = std::strerror(errno);
    return false;
  }
  held_ = true;
  at_return_ = frame_written_ = false;
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

bool PtraceThread::PrepareReturn(std::uint64_t signal_return, std::string* error) {
  if (xstate_.size() < kSoftwareBytesOffset + 48 + 64) {
    *error = "its processor has no XSAVE state to restore it from";
    return false;
  }
  // From the top: the red zone, a margin, the argument area, the XSAVE area (64-byte aligned, for
  // XRSTOR), the frame; a call's stack starts below the frame, 16-byte aligned at the call.
  std::uint64_t top = saved_.rsp - kRedZone - 64;
  argument_area_ = (top - kArgumentBytes) & ~std::uint64_t{15};
  std::uint64_t xsave =
      (argument_area_ - xstate_.size() - sizeof(kXstateMagic2)) & ~std::uint64_t{63};
  frame_ = ((xsave - sizeof(SignalFrame)) & ~std::uint64_t{15}) - 8;

  SignalFrame frame = {};
  frame.return_address = signal_return;
  frame.uc_flags = kUcFlags;
  frame.ss_flags = kAltstackUnchanged;
  const user_regs_struct& r = saved_;
  frame.r8 = r.r8, frame.r9 = r.r9, frame.r10 = r.r10, frame.r11 = r.r11;
  frame.r12 = r.r12, frame.r13 = r.r13, frame.r14 = r.r14, frame.r15 = r.r15;
  frame.rdi = r.rdi, frame.rsi = r.rsi, frame.rbp = r.rbp, frame.rbx = r.rbx;
  frame.rdx = r.rdx, frame.rax = r.rax, frame.rcx = r.rcx, frame.rsp = r.rsp;
  frame.rip = r.rip, frame.eflags = r.eflags;
  frame.cs = static_cast<std::uint16_t>(r.cs), frame.ss = static_cast<std::uint16_t>(r.ss);
  frame.fpstate = xsave;
  // rt_sigreturn never restarts a system call, so one the thread was blocked in is issued again
  // from the frame (the kernel's own restart, except that a sleep starts its full time again: a
  // restart block does not survive rt_sigreturn).
  long call = static_cast<long>(r.orig_rax), value = static_cast<long>(r.rax);
  if (call >= 0 && (value == kRestartSys || value == kRestartNoIntr || value == kRestartNoHand ||
                    value == kRestartBlock)) {
    frame.rip = r.rip - 2;  // the syscall instruction
    frame.rax = r.orig_rax;
  }
  // The blocked-signal mask, exact: the thread is stopped.
  RemoteProcess thread(tid_);
  std::string blocked = thread.StatusField("SigBlk");
  if (blocked.empty()) {
    *error = "cannot read the thread's signal mask";
    return false;
  }
  frame.sigmask = std::strtoull(blocked.c_str(), nullptr, 16);

  // The XSAVE area as ptrace gave it (standard format), with the signal frame's software bytes
  // where ptrace puts the enabled features (XCR0).
  std::vector<unsigned char> area = xstate_;
  std::uint64_t features;
  std::memcpy(&features, area.data() + kSoftwareBytesOffset, sizeof(features));
  std::uint32_t software[12] = {
      kXstateMagic1, static_cast<std::uint32_t>(area.size() + sizeof(kXstateMagic2)),
      static_cast<std::uint32_t>(features), static_cast<std::uint32_t>(features >> 32),
      static_cast<std::uint32_t>(area.size())};
  std::memcpy(area.data() + kSoftwareBytesOffset, software, sizeof(software));
  area.insert(area.end(), reinterpret_cast<const unsigned char*>(&kXstateMagic2),
              reinterpret_cast<const unsigned char*>(&kXstateMagic2) + sizeof(kXstateMagic2));
  if (!thread.Write(xsave, area.data(), area.size()) ||
      !thread.Write(frame_, &frame, sizeof(frame))) {
    *error = "cannot write the thread's stack: " + std::string(std::strerror(errno));
    return false;
  }
  signal_return_ = signal_return;
  frame_written_ = true;
  return true;
}

bool PtraceThread::Call(std::uint64_t address, const std::vector<std::uint64_t>& args,
                        std::uint64_t return_address, std::uint64_t result_address,
                        std::uint64_t* result, std::string* error, int timeout_ms) {
  if (!held_ || !frame_written_) {
    *error = "the thread is not held";
    return false;
  }
  RemoteProcess thread(tid_);
  if (!thread.Write(frame_, &return_address, sizeof(return_address))) {
    *error = "cannot write the thread's stack: " + std::string(std::strerror(errno));
    return false;
  }
  user_regs_struct regs = saved_;
  unsigned long long* slots[] = {&regs.rdi, &regs.rsi, &regs.rdx, &regs.rcx, &regs.r8, &regs.r9};
  for (std::size_t i = 0; i < args.size() && i < 6; ++i) *slots[i] = args[i];
  regs.rsp = frame_;  // the return address
  regs.rip = address;
  regs.rax = 0;  // no vector registers for a variadic callee
  // Nothing to restart; stopped at the entry of the frame's rt_sigreturn, it is skipped.
  regs.orig_rax = static_cast<unsigned long long>(-1);
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0) {
    *error = std::strerror(errno);
    return false;
  }
  at_return_ = false;
  std::int64_t last_value = 0;
  int pending_signal = 0;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, tid_, nullptr,
               reinterpret_cast<void*>(static_cast<long>(pending_signal))) != 0) {
      *error = std::strerror(errno);
      return false;
    }
    KillPoint();
    pending_signal = 0;
    int status = 0;
    if (!WaitStop(&status, timeout_ms)) {
      // Running on inside the call: left to come back through the frame by itself when heaprec
      // attach exits (the kernel detaches it then), never stopped in the middle of the loader.
      *error = errno == ETIMEDOUT ? "the call did not return in time" : std::strerror(errno);
      held_ = false;
      return false;
    }
    if (!WIFSTOPPED(status)) {
      *error = "the process ended";
      held_ = false;
      return false;
    }
    if (IsEventStop(status)) continue;  // a group stop: ours goes on, the kernel re-stops later
    if (IsSyscallStop(status)) {
      __ptrace_syscall_info info = {};
      if (ptrace(PTRACE_GET_SYSCALL_INFO, tid_, reinterpret_cast<void*>(sizeof(info)), &info) <= 0)
        continue;
      if (info.op == PTRACE_SYSCALL_INFO_EXIT) last_value = info.exit.rval;
      if (info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == SYS_rt_sigreturn &&
          info.stack_pointer == frame_ + 8) {
        at_return_ = true;
        *result = static_cast<std::uint64_t>(last_value);
        if (result_address != 0 && !thread.Read(result_address, result, sizeof(*result))) {
          *error = "cannot read the call's result";
          return false;
        }
        return true;
      }
      continue;
    }
    int signal_number = WSTOPSIG(status);
    if (signal_number == SIGSEGV || signal_number == SIGBUS || signal_number == SIGILL ||
        signal_number == SIGFPE) {
      *error = std::string("the call faulted (SIG") + sigabbrev_np(signal_number) + ")";
      return false;  // held in the signal-delivery-stop; RestoreAndDetach discards the signal
    }
    pending_signal = signal_number;  // anything else is the program's: delivered as it came
  }
}

void PtraceThread::RestoreAndDetach() {
  if (!held_) return;
  held_ = false;
  long deliver = 0;
  if (at_return_) {
    // Stopped at the rt_sigreturn's entry, where registers set now would be those of a returning
    // system call: the thread is sent on to libc's signal return with the frame (where a tracer
    // that dies now would leave it, and it would restore itself), and stopped on its way out by
    // PTRACE_INTERRUPT, in the signal path, where the saved registers go back with the kernel's
    // restart of an interrupted system call.
    user_regs_struct parked = saved_;
    parked.rip = signal_return_;
    parked.rsp = frame_ + 8;
    parked.orig_rax = static_cast<unsigned long long>(-1);
    int status = 0;
    if (ptrace(PTRACE_SETREGS, tid_, nullptr, &parked) != 0 ||
        ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0 ||
        ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
      return;  // gone, or left to the frame
    }
    for (;;) {
      if (!WaitStop(&status, 2000) || !WIFSTOPPED(status)) return;
      if (IsEventStop(status)) break;
      if (!IsSyscallStop(status)) {
        deliver = WSTOPSIG(status);  // a signal came first: delivered with the saved registers
        break;
      }
      if (ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) return;
    }
  }
  // The extended state first: a tracer that died between the two stores would leave the thread
  // at the parked registers, which restore everything.
  iovec xstate = {xstate_.data(), xstate_.size()};
  if (!xstate_.empty())
    ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &xstate);
  ptrace(PTRACE_SETREGS, tid_, nullptr, &saved_);
  ptrace(PTRACE_DETACH, tid_, nullptr, reinterpret_cast<void*>(deliver));
}

}  // namespace heaprec::cli
