#include "cli/program_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_errors.h"
#include "preload/control/settings.h"

namespace heaprec::cli {
namespace {

// The program, once it exists: where the signal forwarder sends what heaprec receives.
std::atomic<pid_t> g_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read by a signal handler");

// The signals heaprec catches while the program runs, to pass them on: everything a user or a
// supervisor sends to stop, hang up or poke a process, and the dump signal whatever it is (in a
// container heaprec is the process `docker kill -s SIGNAL` reaches).
constexpr int kAlwaysForwarded[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
constexpr size_t kMaxForwarded = sizeof(kAlwaysForwarded) / sizeof(kAlwaysForwarded[0]) + 1;

// heaprec's signal state as it found it: the program gets it back between fork and exec, so that it
// starts with the mask and dispositions it would have had without heaprec (a signal that heaprec's
// own parent ignored stays ignored, as with nohup).
struct SignalState {
  int forwarded[kMaxForwarded];
  size_t forwarded_count = 0;
  sigset_t mask;
  struct sigaction actions[kMaxForwarded];
  struct sigaction child_action;  // SIGCHLD's
};

// The dump signal the program will have: --dump-signal, or HEAPREC_DUMP_SIGNAL passed through from
// heaprec's own environment. 0 when none (or a bad value, which the library reports itself).
int DumpSignalOf(const RunOptions& o) {
  const std::string* given = o.Setting("HEAPREC_DUMP_SIGNAL");
  const char* text = given != nullptr ? given->c_str() : std::getenv("HEAPREC_DUMP_SIGNAL");
  int signal_number = 0;
  if (text == nullptr || !preload::ParseSignal(text, &signal_number)) return 0;
  return signal_number;
}

void ChooseForwardedSignals(const RunOptions& o, SignalState* state) {
  for (int s : kAlwaysForwarded) state->forwarded[state->forwarded_count++] = s;
  int dump_signal = DumpSignalOf(o);
  bool listed = false;
  for (int s : kAlwaysForwarded) listed = listed || s == dump_signal;
  if (dump_signal > 0 && !listed) state->forwarded[state->forwarded_count++] = dump_signal;
}

// A terminal's interrupt, quit and hangup (si_code SI_KERNEL) go to its whole foreground process
// group, which holds the program too: passing them on would deliver them twice. Anything sent with
// kill or sigqueue was meant for heaprec alone, standing in for the program, so the program gets
// it. This is what sudo does.
void ForwardSignal(int signal_number, siginfo_t* info, void*) {
  if (info->si_code == SI_KERNEL) return;
  int saved_errno = errno;
  pid_t child = g_child.load(std::memory_order_relaxed);
  if (child > 0) kill(child, signal_number);
  errno = saved_errno;
}

// Saves the signal state, then blocks the forwarded signals and installs the forwarder for each
// one not ignored on entry. They stay blocked until the program exists (UnblockForwardedSignals):
// one arriving before that is kept pending rather than lost, then forwarded.
void CatchForwardedSignals(SignalState* saved) {
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (size_t i = 0; i < saved->forwarded_count; ++i) sigaddset(&forwarded, saved->forwarded[i]);
  sigprocmask(SIG_BLOCK, &forwarded, &saved->mask);
  struct sigaction forward = {};
  forward.sa_sigaction = ForwardSignal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < saved->forwarded_count; ++i) {
    sigaction(saved->forwarded[i], nullptr, &saved->actions[i]);
    if (saved->actions[i].sa_handler != SIG_IGN) sigaction(saved->forwarded[i], &forward, nullptr);
  }
  // With SIGCHLD ignored (or SA_NOCLDWAIT), children are reaped unseen and waitpid fails: heaprec
  // could not learn the program's status. The program gets the ignored SIGCHLD back.
  struct sigaction child_default = {};
  child_default.sa_handler = SIG_DFL;
  sigemptyset(&child_default.sa_mask);
  sigaction(SIGCHLD, &child_default, &saved->child_action);
}

void UnblockForwardedSignals(const SignalState& saved) {
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
}

// Puts back the state CatchForwardedSignals saved: in the child before exec, and in heaprec once
// the program is gone (Ctrl-C while heaprec symbolizes then stops heaprec, as it would any
// command). Dispositions first, so that no signal unblocked by the mask meets the forwarder.
// Async-signal-safe: it runs between fork and exec.
void RestoreSignals(const SignalState& saved) {
  for (size_t i = 0; i < saved.forwarded_count; ++i) {
    sigaction(saved.forwarded[i], &saved.actions[i], nullptr);
  }
  sigaction(SIGCHLD, &saved.child_action, nullptr);
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
}

// Starts the program; returns its pid, or -1 if fork failed. The child reports an exec failure
// through a close-on-exec pipe, which closes silently on success. Between fork and exec the child
// only restores what heaprec changed: its signal state and (with --no-follow) one variable.
pid_t StartProgram(const RunOptions& o, const SignalState& signals, int* exec_errno) {
  std::vector<char*> argv;
  for (const std::string& arg : o.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(status_pipe[0]);
    RestoreSignals(signals);
    if (o.Has("HEAPREC_NO_FOLLOW"))
      setenv("HEAPREC_NO_FOLLOW", std::to_string(getpid()).c_str(), 1);
    execvp(argv[0], argv.data());
    int error = errno;
    ssize_t ignored = write(status_pipe[1], &error, sizeof(error));
    (void)ignored;
    _exit(127);
  }
  int fork_errno = errno;
  close(status_pipe[1]);
  if (pid < 0) {
    close(status_pipe[0]);
    errno = fork_errno;
    return -1;
  }
  g_child.store(pid, std::memory_order_relaxed);
  *exec_errno = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], exec_errno, sizeof(*exec_errno));
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  return pid;
}

// The signal's abbreviation with its prefix, "SIGSEGV", or its number for one glibc cannot name
// (a real-time signal).
std::string SignalName(int signal_number) {
  const char* abbreviation = sigabbrev_np(signal_number);
  return abbreviation != nullptr ? std::string("SIG") + abbreviation
                                 : "signal " + std::to_string(signal_number);
}

// How the program ended, in one line for the user, from its wait status.
std::string DescribeEnding(int status) {
  if (WIFEXITED(status)) {
    return "the program exited with status " + std::to_string(WEXITSTATUS(status));
  }
  int signal_number = WTERMSIG(status);
  return "the program was killed by signal " + std::to_string(signal_number) + " (" +
         SignalName(signal_number) + ")" + (WCOREDUMP(status) ? ", core dumped" : "");
}

// As a container's first process (`ENTRYPOINT ["heaprec", "run", ...]`), heaprec is the init of
// its pid namespace: every orphan of the program's process tree becomes its child, and the kernel
// frees none of them until init reaps it. So, like tini, it reaps whatever ends until the program
// itself has ended (which it leaves unreaped, for WaitForProgram).
void ReapOrphansUntil(pid_t program) {
  for (;;) {
    siginfo_t ended = {};
    if (waitid(P_ALL, 0, &ended, WEXITED | WNOWAIT) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (ended.si_pid == program) return;
    while (waitpid(ended.si_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

// Waits for the program, says how it ended and returns heaprec's exit status: the program's, or
// 128+N when signal N killed it, as a shell reports it.
int WaitForProgram(pid_t pid) {
  // First wait without reaping: while the program is a zombie its pid cannot be given to another
  // process, so the forwarder can be stopped before it could signal a stranger.
  siginfo_t ended;
  if (getpid() == 1) {
    ReapOrphansUntil(pid);
  } else {
    while (waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
  }
  g_child.store(0, std::memory_order_relaxed);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::cerr << "heaprec: cannot wait for the program: " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  std::cerr << "heaprec: " << DescribeEnding(status) << "\n";
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void ReserveStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int placeholder = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (placeholder >= 0 && placeholder != fd) {
      dup3(placeholder, fd, O_CLOEXEC);
      close(placeholder);
    }
  }
}

int RunProgram(const RunOptions& o, pid_t* pid, const std::function<void()>& started) {
  SignalState signals;
  ChooseForwardedSignals(o, &signals);
  CatchForwardedSignals(&signals);
  int exec_errno = 0;
  *pid = StartProgram(o, signals, &exec_errno);
  if (*pid < 0) {
    int fork_errno = errno;
    RestoreSignals(signals);
    std::cerr << "heaprec run: cannot start a process: " << std::strerror(fork_errno) << "\n";
    return kExitFailure;
  }
  UnblockForwardedSignals(signals);  // anything that arrived meanwhile is forwarded now
  if (exec_errno != 0) {
    g_child.store(0, std::memory_order_relaxed);  // before its pid is free for another process
    waitpid(*pid, nullptr, 0);
    *pid = -1;  // no program ran: nothing to report
    RestoreSignals(signals);
    std::cerr << "heaprec run: cannot run '" << o.command[0] << "': " << std::strerror(exec_errno)
              << "\n";
    return exec_errno == ENOENT ? 127 : 126;
  }
  if (started) started();
  int status = WaitForProgram(*pid);
  RestoreSignals(signals);
  return status;
}

}  // namespace heaprec::cli
