// fork(): heaprec's locks are held across it, so that the child never inherits one taken by a
// thread that does not exist there, and re-created unlocked in the child (fork_handlers.cc).
#pragma once

namespace heaprec::preload {

// Registers the handlers with pthread_atfork. Once, at start-up, after the arena and the recorder
// exist and before the recorder is published.
void InstallForkHandlers();

}  // namespace heaprec::preload
