// Libraries unloaded with dlclose keep their place in profiles.
//
// A frame captured while a plugin was loaded points into code that is gone by the time the profile
// is written, so /proc/self/maps no longer names it and the frame would stay an anonymous address.
// heaprec's dlclose describes the library's executable segments just before the real dlclose and,
// if the library is really gone afterwards (dlclose only drops a reference), remembers them. Dumps
// add the remembered segments that do not overlap anything mapped now; where a later library took
// the same addresses, the current one wins (those frames are ambiguous, and recent ones more
// likely).
//
// All functions: no malloc (memory from the profiler's arena), take one mutex briefly.
#pragma once

#include <cstdint>

#include "core/heap_profile_encoder.h"
#include "core/memory_resource.h"
#include "preload/objects/loaded_objects.h"

namespace heaprec::preload {

// Remembers an unloaded object's segments (once per distinct segment).
void RememberUnloaded(const LoadedObject& object, MemoryResource& memory);

// Calls visit(const ProfileMapping&) for every remembered segment, under the list's lock.
void ForEachUnloadedMapping(void (*visit)(const ProfileMapping&, void*), void* context);

// fork(): keep the lock consistent across fork, like the recorder's.
void LockUnloadedForFork();
void UnlockUnloadedAfterForkInParent();
void ResetUnloadedAfterForkInChild();

}  // namespace heaprec::preload
