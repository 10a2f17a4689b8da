// What `heaprec attach` reads about another process without stopping it (docs/design/attach.md):
// its threads and their states from /proc, its mappings, its memory (process_vm_readv), and the
// dynamic symbols of the objects it loaded, looked up in its memory rather than in files, so that a
// process in another mount namespace, or one whose files were replaced since, is read as it is.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heaprec::cli {

struct Mapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  std::string permissions, path;  // path: " (deleted)" after it when the file was removed
  dev_t device = 0;               // of the mapped file (0 for anonymous memory)
  ino_t inode = 0;
};

struct ThreadState {
  pid_t tid = 0;
  std::string name;   // comm
  char state = '?';   // R S D T t Z ...
  long syscall = -2;  // /proc/TID/syscall: the number it blocks in, -1 none, -2 running
  std::uint64_t syscall_second_argument = 0;  // of that call (a futex's operation)
  int seccomp = 0;                            // 0 off, 1 strict, 2 filter
  pid_t tracer = 0;  // the process that ptraces it (a debugger, strace), or 0
};

class RemoteProcess {
 public:
  explicit RemoteProcess(pid_t pid) : pid_(pid) {}
  pid_t pid() const { return pid_; }
  std::string ProcPath(const std::string& file) const;

  std::vector<Mapping> Mappings() const;  // empty when not readable
  std::vector<ThreadState> Threads() const;
  // Where thread `tid` sleeps in the kernel (/proc/PID/task/TID/wchan: "futex_do_wait",
  // "poll_schedule_timeout", "0" when not blocked or without kallsyms), or "" when unreadable.
  std::string WaitChannel(pid_t tid) const;
  char ProcessState() const;  // from /proc/PID/stat; '\0' when the process is gone
  uid_t Uid() const;          // the real uid, or -1
  // The value after "NAME:" and its blanks in /proc/PID/status (a thread's, when the pid is a
  // thread id), or "".
  std::string StatusField(const std::string& name) const;

  bool Read(std::uint64_t address, void* out, std::size_t size) const;
  bool Write(std::uint64_t address, const void* data, std::size_t size) const;

  // The load address of the object mapped from a file whose path ends in `suffix` (its mapping at
  // offset 0), or 0.
  std::uint64_t ObjectBase(const std::vector<Mapping>& maps, const std::string& suffix) const;

  // The address of the dynamic symbol `name` defined by the object loaded at `base`, looked up in
  // its GNU hash table (else its SysV one) in memory; 0 when it has none.
  std::uint64_t Symbol(std::uint64_t base, const std::string& name) const;

 private:
  pid_t pid_;
};

// Facts of an ELF file (the target's executable) needed before touching it.
struct ExecutableFacts {
  bool readable = false;
  bool dynamic = false;         // has PT_INTERP: started by the dynamic loader
  bool defines_malloc = false;  // malloc defined in .dynsym or .symtab: its own allocator
};
ExecutableFacts ReadExecutableFacts(const std::string& path);

}  // namespace heaprec::cli
