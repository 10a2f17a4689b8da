// The interface between `heaprec attach/detach/dump PID` (src/inject, the CLI side) and the
// library inside the target (preload/attach/injected.h), docs/design/attach.md.
//
// The library exports two symbols the CLI finds in the target's memory by name:
//   heaprec_control_block    a ControlBlock: how the library came in and what it is doing, which
//                            the CLI reads with process_vm_readv (no environment, no argv: programs
//                            rewrite those) and polls to learn that a command was carried out;
//   heaprec_attach_command   int (const AttachRequest*): called in the target by ptrace on one of
//                            its threads, it only takes the request and wakes heaprec's dump
//                            thread, which does the work; returns an AttachResult at once.
// Header-only, plain data: both sides are built from the same tree, and the version field tells a
// library of another build.
#pragma once

#include <cstdint>

namespace heaprec::schema {

inline constexpr char kControlBlockSymbol[] = "heaprec_control_block";
inline constexpr char kAttachCommandSymbol[] = "heaprec_attach_command";
// The memfd the CLI loads the library from; the library knows it was injected by this name.
inline constexpr char kAttachMemfdName[] = "heaprec-attach";
inline constexpr char kControlMagic[16] = "heaprec-ctl";
inline constexpr std::uint32_t kControlVersion = 1;

// How the library came into the process (ControlBlock::mode).
enum LoadMode : std::int32_t {
  kModeNone = 0,      // loaded, profiling off (a bad setting, setuid, ...)
  kModeStarted = 1,   // LD_PRELOAD, sampling from the start
  kModeDormant = 2,   // LD_PRELOAD with HEAPREC_DORMANT: attach and detach by the dump signal
  kModeInjected = 3,  // loaded by `heaprec attach` through ptrace
  kModeRuntime = 4,   // LD_PRELOAD with HEAPREC_RUNTIME: a runtime's front end drives it (Ruby)
};

struct ControlBlock {
  char magic[16];
  std::uint32_t version;
  std::int32_t mode;            // LoadMode
  std::int32_t dump_signal;     // a dormant process's, which carries attach and detach
  std::int32_t sampling;        // 1 while attached and sampling
  std::uint64_t commands_done;  // bumped by the dump thread after each AttachRequest carried out
  std::int32_t last_result;     // the errno value of the last command's profile (0 written)
  std::int32_t http_port;       // the TCP port the --http endpoint listens on (0: none), to say
};

enum AttachCommand : std::int32_t {
  kCommandStart = 1,   // attach: start sampling (the first time: the whole start-up)
  kCommandDetach = 2,  // write a profile, stop sampling, take the allocation hooks out again
  kCommandDump = 3,    // write a profile now to file_name in the handed-over directory
};

// What heaprec_attach_command answers at once (the work itself is the dump thread's).
enum AttachResult : std::int32_t {
  kResultQueued = 0,
  kResultAlreadyAttached = 1,  // kCommandStart while sampling
  kResultNotAttached = 2,      // kCommandDetach while not sampling
  kResultBadRequest = 3,       // wrong magic, a setting not accepted, no directory received
  kResultNotInjected = 4,      // kCommandStart/Detach in a process started under heaprec
  kResultBusy = 5,             // a command not carried out yet
};

inline constexpr std::uint32_t kRequestMagic = 0x68706175;  // "hpau" (the layout's second version)

// glibc's heap at the attach by block size, as the CLI read it from outside (cli/glibc_heap.h):
// class k holds the in-use chunks whose smallest possible request was in (2^(k-1), 2^k] bytes
// (class 0: 1 byte), counted with their chunk's whole size, as mallinfo2 counts them.
inline constexpr int kHeapSizeClasses = 48;
struct HeapSizeClass {
  std::uint64_t blocks;
  std::uint64_t bytes;
};

// Written by the CLI into memory it maps in the target for the call.
struct AttachRequest {
  std::uint32_t magic;
  std::int32_t command;      // AttachCommand
  std::int32_t handover_fd;  // the target's end of a socket carrying one directory descriptor
  std::int32_t reserved;
  std::uint64_t library_handle;  // dlopen's handle of the library (kCommandStart)
  char file_name[256];           // kCommandDump: the profile's name in the directory
  char settings[8192];           // "HEAPREC_NAME=value\0...\0\0", as `heaprec run` exports them
  // kCommandStart: the heap before the attach; held_walked is their total, 0 when not read.
  HeapSizeClass held_by_size[kHeapSizeClasses];
  std::uint64_t held_walked;
  char library_path[512];  // kCommandStart: where the CLI read the library from (its namespace)
};

}  // namespace heaprec::schema
