// Whether this process owns its memory. A vfork child runs in its parent's memory until it execs
// or exits: it must never write a profile of that memory or take heaprec's locks (they would stay
// taken in the parent). Lock-free, async-signal-safe.
#pragma once

namespace heaprec::preload {

// Records the pid whose memory this is: at start-up, and in the child after fork.
void RememberOwnPid();

// False in a vfork child.
bool InOwnProcess();

}  // namespace heaprec::preload
