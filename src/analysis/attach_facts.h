// What a profile of an attached process does not cover: the allocations made before the attach
// (docs/design/attach.md), as the library states it in the profile's comments (schema
// kAttachedField and the fields after it). Reports and summaries say it, so that memory held from
// before the attach is never taken for something else (the allocator's overhead, a small heap).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "profile/profile.h"

namespace heaprec::analysis {

// Blocks of (2^(K-1), 2^K] bytes requested (schema kHeldBySizeField's CLASS:BYTES:BLOCKS).
struct HeldSizeClass {
  int size_class = 0;
  int64_t bytes = 0;
  int64_t blocks = 0;
};

struct AttachFacts {
  int64_t attaches = 0;        // how many times the process was attached
  int64_t attached_at_s = -1;  // the latest attach, in Unix seconds (-1: not said)
  // Loaded by `heaprec attach` into a running process (else started dormant and attached).
  bool injected = false;
  // Injected only; -1 where not said. glibc's bytes in use at the first attach; at the latest
  // look; and of those, the part no sample since the attach accounts for (blocks from before it,
  // still live).
  int64_t held_at_attach = -1;
  int64_t heap_in_use = -1;
  int64_t unattributed = -1;
  // What heaprec attach's walk of glibc's heap found in use then, and its largest size classes by
  // bytes, largest first (empty when not read).
  int64_t held_walked = -1;
  std::vector<HeldSizeClass> held_by_size{};
};

// The profile's attach facts; nullopt for a profile of a process that was never attached.
std::optional<AttachFacts> AttachFactsOf(const profile::Profile& profile);

}  // namespace heaprec::analysis
