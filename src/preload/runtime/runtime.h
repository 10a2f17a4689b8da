// Runtime mode (HEAPREC_RUNTIME): the preload library samples native allocations for a language
// runtime's front end loaded into the same process, which owns every output (include/heaprec/
// runtime.h has the interface, docs/design/ruby.md "Bytes by bytes" the design). Here: what the
// allocation slow path asks of the attached runtime.
#pragma once

#include <cstdint>

namespace heaprec::preload {

// Lets the attached runtime rewrite a sample's stack (native frames, leaf first, `depth` of
// `capacity`) into native frames plus its own; returns the new depth, or HEAPREC_RUNTIME_SKIP when
// the allocation is not to be recorded. Without a runtime attached, the stack as it is. Called
// under a HookGuard: the runtime's own allocations are not sampled.
std::uint32_t CompleteWithRuntimeFrames(std::uint64_t* frames, std::uint32_t depth,
                                        std::uint32_t capacity);

}  // namespace heaprec::preload
