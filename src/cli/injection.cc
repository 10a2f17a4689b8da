#include "cli/injection.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <set>

namespace heaprec::cli {
namespace {

constexpr std::uint64_t kScratchBytes = 65536;
// Scratch layout: the return routine's page (made read-and-execute), its slots, the signal masks,
// strings, the socketpair's numbers, the request.
constexpr std::uint64_t kCodeBytes = 4096, kResultSlot = 4096, kErrnoAddressSlot = 4104,
                        kSavedErrnoSlot = 4112, kMaskOffset = 4224, kOldMaskOffset = 4352,
                        kNameOffset = 4480, kPathOffset = 4608, kPairOffset = 5120,
                        kRequestOffset = 8192;

// glibc's __restore_rt, the sa_restorer of every handler it installs: mov $15,%rax; syscall.
constexpr unsigned char kSignalReturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

// The routine calls return to once the scratch exists: keeps the result (rax) in its slot, puts the
// thread's errno back once its address is known, then the frame's rt_sigreturn
// (ptrace_thread.h), at whose entry the tracer takes over.
std::vector<unsigned char> ReturnRoutine(std::uint64_t scratch) {
  std::vector<unsigned char> code;
  auto add = [&code](std::initializer_list<unsigned char> bytes) {
    code.insert(code.end(), bytes);
  };
  auto address = [&code](std::uint64_t value) {
    for (int i = 0; i < 8; ++i) code.push_back(static_cast<unsigned char>(value >> (8 * i)));
  };
  add({0x48, 0xa3});  // movabs %rax, result
  address(scratch + kResultSlot);
  add({0x48, 0xa1});  // movabs errno_address, %rax
  address(scratch + kErrnoAddressSlot);
  add({0x48, 0x85, 0xc0});  // test %rax, %rax
  add({0x74, 0x0e});        // je over the next 14 bytes
  add({0x48, 0x89, 0xc2});  // mov %rax, %rdx
  add({0xa1});              // movabs saved_errno, %eax
  address(scratch + kSavedErrnoSlot);
  add({0x89, 0x02});                    // mov %eax, (%rdx)
  add({0xb8, 0x0f, 0x00, 0x00, 0x00});  // mov $15 (rt_sigreturn), %eax
  add({0x0f, 0x05});                    // syscall
  return code;
}

// System calls a thread blocks in without holding a lock of glibc's or the loader's (futex is
// decided by its operation, below), nor anything heaprec's own threads sit in.
const std::set<long> kBlockingSyscalls = {
    SYS_read,        SYS_readv,           SYS_pread64,  SYS_poll,          SYS_select,
    SYS_nanosleep,   SYS_clock_nanosleep, SYS_pause,    SYS_accept,        SYS_accept4,
    SYS_recvfrom,    SYS_recvmsg,         SYS_wait4,    SYS_waitid,        SYS_epoll_wait,
    SYS_epoll_pwait, SYS_ppoll,           SYS_pselect6, SYS_rt_sigsuspend, SYS_rt_sigtimedwait,
    SYS_msgrcv,      SYS_io_getevents,    SYS_connect,  SYS_write,         SYS_sendto,
};

// Whether a thread in system call `call` (with `second_argument`) is blocked holding nothing.
//
// A futex wait is one when it waits for an event: glibc waits for a condition variable, a thread's
// end (pthread_join), a semaphore or a barrier with FUTEX_WAIT_BITSET, and for a lock (its own
// internal ones, malloc's arenas and the loader's among them, as a program's mutexes) with
// FUTEX_WAIT. A thread waiting for an event holds no lock of glibc's, while one waiting for a lock
// may hold another. An idle server (workers in pthread_cond_wait, main in pthread_join) has nothing
// but event waits: before, it had no safe point at all.
//
// A sleep, a poll or a futex wait with a timeout that a stop interrupted (a debugger, strace, an
// earlier heaprec attach or dump) is continued by the kernel as restart_syscall, which has lost the
// futex's operation: it is a sleep or a poll, which hold nothing, unless the thread waits on a
// futex (its wait channel, `wait_channel`, names one). A channel that names nothing ("0" without
// kallsyms) proves nothing.
bool BlockedHoldingNothing(long call, std::uint64_t second_argument,
                           const std::string& wait_channel) {
  if (call == SYS_futex) {
    return (second_argument & FUTEX_CMD_MASK) == FUTEX_WAIT_BITSET;
  }
  if (call == SYS_restart_syscall) {
    return !wait_channel.empty() && wait_channel != "0" &&
           wait_channel.find("futex") == std::string::npos;
  }
  return kBlockingSyscalls.count(call) != 0;
}

std::uint64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::uint64_t(t.tv_sec) * 1000000000ull + std::uint64_t(t.tv_nsec);
}

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

bool IsGuardedObject(const std::string& path) {
  return Contains(path, "/libc.so") || Contains(path, "/ld-linux") ||
         Contains(path, "libheaprec") || Contains(path, "memfd:heaprec-attach");
}

int PidfdGetfd(pid_t pid, int target_fd) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return -1;
  int fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, target_fd, 0));
  close(pidfd);
  return fd;
}

bool SendDescriptor(int socket, int fd) {
  char byte = 0;
  iovec data = {&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message = {};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof(fd));
  return sendmsg(socket, &message, MSG_NOSIGNAL) == 1;
}

// The process that ptraces thread `tid` (its TracerPid), or 0.
pid_t TracerOf(pid_t tid) {
  return static_cast<pid_t>(std::atol(RemoteProcess(tid).StatusField("TracerPid").c_str()));
}

std::string TracedBy(pid_t tracer) {
  std::string name = RemoteProcess(tracer).StatusField("Name");
  return "its threads are traced by process " + std::to_string(tracer) +
         (name.empty() ? "" : " (" + name + ")") +
         ", and a thread has one tracer at a time: detach it (a debugger's detach, or end strace) "
         "and try again";
}

}  // namespace

std::uint64_t Injection::FindSignalReturn() const {
  for (const Mapping& m : maps_) {
    if (!Contains(m.path, "/libc.so") || m.permissions.find('x') == std::string::npos) continue;
    std::vector<unsigned char> text(m.end - m.start);
    if (!process_.Read(m.start, text.data(), text.size())) continue;
    auto at =
        std::search(text.begin(), text.end(), std::begin(kSignalReturn), std::end(kSignalReturn));
    if (at != text.end()) return m.start + static_cast<std::uint64_t>(at - text.begin());
  }
  return 0;
}

std::uint64_t HeaprecLibraryBase(const std::vector<Mapping>& maps) {
  for (const Mapping& m : maps) {
    if (m.offset == 0 &&
        (Contains(m.path, "libheaprec") || Contains(m.path, "memfd:heaprec-attach")))
      return m.start;
  }
  return 0;
}

bool Injection::IsSafePoint(const user_regs_struct& regs, const std::string& wait_channel) const {
  long in_syscall = static_cast<long>(regs.orig_rax);
  for (const Mapping& m : maps_) {
    if (regs.rip < m.start || regs.rip >= m.end) continue;
    // Blocked in a system call that holds nothing: safe wherever the wrapper lives.
    if (in_syscall >= 0)
      return BlockedHoldingNothing(in_syscall, regs.rsi, wait_channel) &&
             !Contains(m.path, "heaprec");
    return !IsGuardedObject(m.path);
  }
  // JIT code
  return in_syscall >= 0 ? BlockedHoldingNothing(in_syscall, regs.rsi, wait_channel) : true;
}

bool Injection::SeizeSafeThread(std::string* error) {
  std::vector<ThreadState> threads = process_.Threads();
  // Blocked threads first (the main thread first among them), then the busy ones. A thread that
  // a debugger or strace traces cannot be seized (one tracer per thread): the others can.
  std::vector<pid_t> order;
  pid_t tracer = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const ThreadState& t : threads) {
      if (t.name.rfind("heaprec:", 0) == 0 || t.state == 'Z' || t.state == 'X') continue;
      if (t.tracer != 0) {
        tracer = t.tracer;
        continue;
      }
      bool blocked = t.syscall >= 0 && BlockedHoldingNothing(t.syscall, t.syscall_second_argument,
                                                             process_.WaitChannel(t.tid));
      if ((pass == 0) != blocked) continue;
      if (t.tid == process_.pid()) {
        order.insert(order.begin() + (pass == 0 ? 0 : static_cast<long>(order.size())), t.tid);
      } else {
        order.push_back(t.tid);
      }
    }
  }
  if (order.empty()) {
    *error = tracer != 0 ? TracedBy(tracer) : "it has no thread heaprec could use";
    return false;
  }
  // A busy thread is caught again and again until it is outside glibc, the loader and heaprec.
  std::uint64_t deadline = NowNs() + 2000000000ull;
  std::string last_error;
  while (NowNs() < deadline) {
    for (pid_t tid : order) {
      // Read while the thread runs or blocks: once stopped, its channel is the stop's.
      const std::string wait_channel = process_.WaitChannel(tid);
      if (!thread_.Seize(tid, &last_error)) {
        // Traced since the list was read: another thread may do.
        if (errno == EPERM && TracerOf(tid) != 0) {
          last_error = TracedBy(TracerOf(tid));
          continue;
        }
        if (errno == EPERM || errno == EACCES) {
          *error = last_error;
          return false;
        }
        continue;
      }
      if (IsSafePoint(thread_.saved(), wait_channel)) {
        tid_ = tid;
        found_stopped_ = thread_.in_group_stop();
        return true;
      }
      thread_.Release();
      if (thread_.in_group_stop()) continue;
    }
    timespec pause = {0, 2000000};
    nanosleep(&pause, nullptr);
  }
  *error =
      "no thread reached a safe point within 2 s (" +
      (last_error.empty() ? std::string("its threads were busy inside glibc or waiting for a lock")
                          : last_error) +
      "); try again";
  return false;
}

bool Injection::Call(const char* function, const std::vector<std::uint64_t>& args,
                     std::uint64_t* result, std::string* error) {
  std::uint64_t address = process_.Symbol(libc_, function);
  if (address == 0) {
    *error = std::string("its C library has no ") + function;
    return false;
  }
  std::string why;
  if (!CallAt(address, args, result, &why)) {
    *error = std::string(function) + " in the process: " + why;
    return false;
  }
  return true;
}

bool Injection::CallAt(std::uint64_t address, const std::vector<std::uint64_t>& args,
                       std::uint64_t* result, std::string* error) {
  // Before the scratch exists (and for its munmap), libc's signal return, with the result of the
  // wrapper's system call; after, the routine that keeps any function's result.
  if (return_routine_ == 0) {
    return thread_.Call(address, args, thread_.signal_return(), 0, result, error);
  }
  return thread_.Call(address, args, return_routine_, scratch_ + kResultSlot, result, error);
}

bool Injection::Begin(std::string* error) {
  maps_ = process_.Mappings();
  libc_ = process_.ObjectBase(maps_, "/libc.so.6");
  if (libc_ == 0) {
    *error = "its C library is not glibc's (no libc.so.6 is loaded)";
    return false;
  }
  // Found before any thread is held: the way back every call takes (ptrace_thread.h).
  std::uint64_t signal_return = FindSignalReturn();
  if (signal_return == 0) {
    *error = "its C library has no signal-return routine heaprec knows";
    return false;
  }
  begin_ns_ = NowNs();
  if (!SeizeSafeThread(error)) return false;
  begun_ = true;
  if (!thread_.PrepareReturn(signal_return, error)) return false;
  std::uint64_t scratch = 0;
  if (!Call("mmap",
            {0, kScratchBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             static_cast<std::uint64_t>(-1), 0},
            &scratch, error)) {
    return false;
  }
  if (scratch == reinterpret_cast<std::uint64_t>(MAP_FAILED) || scratch == 0) {
    *error = "the process could not map memory";
    return false;
  }
  scratch_ = scratch;
  std::vector<unsigned char> routine = ReturnRoutine(scratch_);
  std::uint64_t status = 0;
  if (!process_.Write(scratch_, routine.data(), routine.size()) ||
      !Call("mprotect", {scratch_, kCodeBytes, PROT_READ | PROT_EXEC}, &status, error)) {
    return false;
  }
  if (status != 0) {
    *error = "the process could not make its scratch memory executable";
    return false;
  }
  return_routine_ = scratch_;
  // Every signal blocked but those a fault raises: a fault with its signal blocked would reset
  // the program's handler to the default (the kernel's force_sig_info).
  sigset_t mask;
  sigfillset(&mask);
  for (int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) sigdelset(&mask, s);
  std::uint64_t ignored;
  if (!process_.Write(scratch_ + kMaskOffset, &mask, sizeof(mask)) ||
      !Call("sigprocmask", {SIG_BLOCK, scratch_ + kMaskOffset, scratch_ + kOldMaskOffset}, &ignored,
            error)) {
    return false;
  }
  mask_saved_ = true;
  if (!Call("__errno_location", {}, &errno_address_, error) ||
      !process_.Read(errno_address_, &saved_errno_, sizeof(saved_errno_))) {
    errno_address_ = 0;
  }
  // From here the return routine puts errno back after every call, also for a thread whose tracer
  // died.
  std::uint64_t saved_errno = static_cast<std::uint32_t>(saved_errno_);
  if (errno_address_ != 0) {
    process_.Write(scratch_ + kSavedErrnoSlot, &saved_errno, sizeof(saved_errno));
    process_.Write(scratch_ + kErrnoAddressSlot, &errno_address_, sizeof(errno_address_));
  }
  return true;
}

bool Injection::Load(const std::string& library_path, std::string* error) {
  std::uint64_t result = 0;
  std::string name = schema::kAttachMemfdName;
  if (!process_.Write(scratch_ + kNameOffset, name.c_str(), name.size() + 1) ||
      !Call("memfd_create", {scratch_ + kNameOffset, MFD_CLOEXEC}, &result, error)) {
    return false;
  }
  int memfd = static_cast<int>(result);
  if (memfd < 0) {
    *error = "the process could not create a memory file";
    return false;
  }
  std::ifstream in(library_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bool written = false;
  {
    int fd = open(process_.ProcPath("fd/" + std::to_string(memfd)).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      written = !bytes.empty() &&
                write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
      close(fd);
    }
  }
  std::string path = "/proc/self/./fd/" + std::to_string(memfd);
  bool loaded = false;
  if (written && process_.Write(scratch_ + kPathOffset, path.c_str(), path.size() + 1) &&
      Call("dlopen", {scratch_ + kPathOffset, RTLD_NOW}, &handle_, error)) {
    loaded = handle_ != 0;
    if (!loaded) {
      std::uint64_t message = 0;
      char text[256] = {};
      if (Call("dlerror", {}, &message, error) && message != 0) {
        process_.Read(message, text, sizeof(text) - 1);
      }
      *error = std::string("the process could not load heaprec: ") + text;
    }
  } else if (!written) {
    *error = "cannot write the library into the process's memory file";
  }
  Call("close", {static_cast<std::uint64_t>(memfd)}, &result, error);
  return loaded;
}

int Injection::HandOver(int fd, std::string* error) {
  std::uint64_t result = 0;
  if (!Call("socketpair", {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, scratch_ + kPairOffset}, &result,
            error)) {
    return -1;
  }
  int pair[2];
  if (static_cast<int>(result) != 0 || !process_.Read(scratch_ + kPairOffset, pair, sizeof(pair))) {
    *error = "the process could not make a socket";
    return -1;
  }
  handover_[0] = pair[0];
  handover_[1] = pair[1];
  int ours = PidfdGetfd(process_.pid(), pair[0]);
  bool sent = ours >= 0 && SendDescriptor(ours, fd);
  if (ours >= 0) close(ours);
  if (!sent) {
    *error = std::string("cannot hand a descriptor to the process: ") + std::strerror(errno);
    return -1;
  }
  return pair[1];
}

int Injection::Command(schema::AttachRequest request, std::string* error) {
  std::uint64_t base = HeaprecLibraryBase(process_.Mappings());
  std::uint64_t function = base != 0 ? process_.Symbol(base, schema::kAttachCommandSymbol) : 0;
  if (function == 0) {
    *error = "heaprec's library in the process has no " +
             std::string(schema::kAttachCommandSymbol) + " (another version of heaprec?)";
    return -1;
  }
  request.magic = schema::kRequestMagic;
  request.library_handle = handle_;
  std::uint64_t result = 0;
  std::string why;
  if (!process_.Write(scratch_ + kRequestOffset, &request, sizeof(request)) ||
      !CallAt(function, {scratch_ + kRequestOffset}, &result, &why)) {
    *error = "heaprec's command in the process: " + why;
    return -1;
  }
  return static_cast<int>(static_cast<std::int32_t>(result));
}

void Injection::End() {
  if (!begun_) return;
  begun_ = false;
  std::string ignored_error;
  std::uint64_t ignored;
  for (int& fd : handover_) {
    if (fd >= 0) Call("close", {static_cast<std::uint64_t>(fd)}, &ignored, &ignored_error);
    fd = -1;
  }
  if (errno_address_ != 0) process_.Write(errno_address_, &saved_errno_, sizeof(saved_errno_));
  if (mask_saved_) {
    Call("sigprocmask", {SIG_SETMASK, scratch_ + kOldMaskOffset, 0}, &ignored, &ignored_error);
  }
  return_routine_ = 0;  // it lives in the scratch: munmap returns through libc's signal return
  if (scratch_ != 0) Call("munmap", {scratch_, kScratchBytes}, &ignored, &ignored_error);
  thread_.RestoreAndDetach();
  stopped_ns_ = NowNs() - begin_ns_;
}

}  // namespace heaprec::cli
