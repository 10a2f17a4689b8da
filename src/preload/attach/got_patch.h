// Routing a running program's calls to heaprec without LD_PRELOAD: the GOT entries of every loaded
// object (docs/design/attach.md).
//
// A library loaded with dlopen interposes nothing: every object already bound malloc, free,
// sigaction, ... to glibc's (or jemalloc's) in its global offset table. So for each entry point
// heaprec defines (exports.map), each JUMP_SLOT and GLOB_DAT relocation of that name in each loaded
// object is rewritten from the definition the program binds (dlsym(RTLD_DEFAULT)) to heaprec's,
// and back. A slot holding anything else (a program's own operator new, another version of the
// symbol) is left alone, so the program's choices hold exactly as under LD_PRELOAD. Slots under
// RELRO are made writable for the one 8-byte store and read-only again; the store is atomic, so a
// thread calling through the slot at that moment takes either function, both correct.
//
// heaprec's own objects, the loader and the vDSO are never patched. Objects loaded later are
// found by RouteHooksInNewObjects (dl_iterate_phdr's load counter), which the dump thread calls
// often. One writer at a time (a flag; the attach's thread, then the dump thread; reset in a fork
// child).
#pragma once

namespace heaprec::preload {

enum class HookSet {
  kAll,          // while attached: every entry point
  kProcessOnly,  // before the attach and after a detach: the signal, exit, exec, setuid and
                 // dlclose entry points (the program's view of its signal dispositions must stay
                 // consistent with heaprec's handlers, which stay); every allocation and release
                 // entry point is the program's own again, at full speed
};

// Resolves heaprec's definitions through `own_handle` (dlopen's handle of this library: inside
// it, a plain reference to malloc would bind to glibc's, which comes first in the global scope).
// False when a definition cannot be found.
bool PrepareHooks(void* own_handle);

// Routes the entry points of `set` in every loaded object to heaprec, and those outside `set` back
// to the program's definitions. Returns the number of slots changed.
int RouteHooks(HookSet set);

// Routes again when objects were loaded since the last call (cheap otherwise: one
// dl_iterate_phdr, whose callback stops at once). Returns the number of slots changed.
int RouteHooksInNewObjects();

// In a fork child: a routing the parent had under way at the fork is done again from the start.
void ResetRoutingInChild();

}  // namespace heaprec::preload
