// The library loaded into a running process by `heaprec attach PID` (docs/design/attach.md).
//
// The CLI loads libheaprec.so with dlopen from a memfd named schema::kAttachMemfdName, on one of
// the target's threads that it holds with ptrace, and then calls heaprec_attach_command there
// (schema/attach.h). Such a load is told apart in the constructor (LoadedByAttach), which then does
// nothing: no environment was set for it. The command call itself only takes the request (the
// settings, the output directory's descriptor handed over on a socket) and wakes the dump thread;
// the dump thread does the work, as it does a dormant process's attach (dormant.h): creates the
// recorder, routes the GOT slots to heaprec (got_patch.h), writes profiles, and bumps
// ControlBlock::commands_done, which the CLI polls.
//
// Blocks are never tagged in an injected process (real_allocator.h: UseUntaggedBlocks): blocks
// allocated before the attach, or freed by a path that never reaches heaprec, are plain glibc
// blocks, whatever happens.
#pragma once

#include <cstdint>

#include "schema/attach.h"

namespace heaprec::preload {

// The constructor: whether this copy of the library was loaded by `heaprec attach`.
bool LoadedByAttach();

// Renames this library in the loader's list (link_map l_name), which debuggers and profilers open
// from their own process: "/proc/self/./fd/N", the name it was loaded by, is there their own
// descriptor N (`gdb -p` blocked reading its own pipe). Called at load with nullptr (a name no file
// has, the one /proc/PID/maps shows) and at the first attach with the absolute path `heaprec
// attach` loaded it from, so that tools in the same mount namespace find its symbols.
void NameLoadedObject(const char* path);

// Start-up (startup.cc): the control block says how the library came in.
void PublishLoadMode(schema::LoadMode mode, int dump_signal);
void PublishSampling(bool sampling);
// The TCP port the HTTP endpoint listens on, 0 when none: `heaprec attach --http` says where.
void PublishHttpPort(int port);

// The dump thread, on each wake-up: carries out a queued command, keeps the GOT routing current
// for objects loaded since, and samples the heap's size for the profile's comments. Returns how
// long the thread may sleep before calling again (ns), UINT64_MAX when not injected.
std::uint64_t RunInjectedWork();

// For the profile's comments (0 when not injected): how much the process's heap held at the attach
// (glibc's in-use bytes, mallinfo2), how much it holds now, and how much of the heap is not
// attributed to samples taken since (pre-attach blocks still live: it only shrinks).
struct AttachFacts {
  bool injected = false;
  // glibc's malloc is in charge: the three below are its counts. Another allocator's heap is not
  // known (glibc's counts would read as an empty heap).
  bool heap_known = false;
  std::uint64_t held_at_attach = 0;
  std::uint64_t in_use = 0;
  std::uint64_t unattributed = 0;
  std::uint64_t rss_at_attach = 0;
  const char* held_by_size = "";  // schema kHeldBySizeField's value, "" when the heap was not read
  std::uint64_t held_walked = 0;
};
AttachFacts CurrentAttachFacts();

}  // namespace heaprec::preload
