#include "preload/process/own_process.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace heaprec::preload {
namespace {

std::atomic<int> g_own_pid{0};

// The kernel's answer, not glibc's cached one, which a vfork child shares with its parent.
int ProcessId() { return static_cast<int>(syscall(SYS_getpid)); }

}  // namespace

void RememberOwnPid() { g_own_pid.store(ProcessId(), std::memory_order_relaxed); }

bool InOwnProcess() { return ProcessId() == g_own_pid.load(std::memory_order_relaxed); }

}  // namespace heaprec::preload
