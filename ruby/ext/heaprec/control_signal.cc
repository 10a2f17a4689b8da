#include "control_signal.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>

#include "schema/control.h"

namespace heaprec::ruby {
namespace {

enum Command : int { kNone = 0, kAttach, kDetach };

// What the handler leaves for the control thread: the last attach or detach (each `heaprec attach`
// and `detach` waits until the thread has carried out its command, so two never queue up; a
// later one wins), and the number of dump requests. Lock-free atomics: a signal handler may
// interrupt the control thread itself, on any thread.
std::atomic<int> g_switch{kNone};
std::atomic<std::uint32_t> g_dumps{0};

void OnSignal(int, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_QUEUE) {
    if (info->si_value.sival_int == schema::kAttachSignalValue) {
      g_switch.store(kAttach, std::memory_order_relaxed);
      return;
    }
    if (info->si_value.sival_int == schema::kDetachSignalValue) {
      g_switch.store(kDetach, std::memory_order_relaxed);
      return;
    }
  }
  g_dumps.fetch_add(1, std::memory_order_relaxed);  // a plain kill -SIGNAL, or another value
}

// A command still waiting when the process forks was sent to the parent (`heaprec attach PID`
// names one process): the child's copy of it is dropped, as the native library drops its own
// (ForgetControlCommandInChild).
void ForgetCommandsInChild() {
  g_switch.store(kNone, std::memory_order_relaxed);
  g_dumps.store(0, std::memory_order_relaxed);
}

// Heaprec._listen_for_commands(signal_number): the dump signal carries the commands from now on.
// SA_RESTART: the program's interrupted system calls resume as if nothing had happened.
VALUE ListenForCommands(VALUE, VALUE signal_number) {
  struct sigaction action = {};
  action.sa_sigaction = OnSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(NUM2INT(signal_number), &action, nullptr) != 0) rb_sys_fail("sigaction");
  return Qnil;
}

// Heaprec._next_command: :attach, :detach, :dump, or nil when none is waiting.
VALUE NextCommand(VALUE) {
  switch (g_switch.exchange(kNone, std::memory_order_relaxed)) {
    case kAttach:
      return ID2SYM(rb_intern("attach"));
    case kDetach:
      return ID2SYM(rb_intern("detach"));
    default:
      break;
  }
  std::uint32_t dumps = g_dumps.load(std::memory_order_relaxed);
  while (dumps > 0 && !g_dumps.compare_exchange_weak(dumps, dumps - 1)) {
  }
  return dumps > 0 ? ID2SYM(rb_intern("dump")) : Qnil;
}

}  // namespace

void DefineControlSignal(VALUE module) {
  rb_define_singleton_method(module, "_listen_for_commands", ListenForCommands, 1);
  rb_define_singleton_method(module, "_next_command", NextCommand, 0);
  pthread_atfork(nullptr, nullptr, ForgetCommandsInChild);
}

}  // namespace heaprec::ruby
