// Native bytes: the memory Ruby objects keep outside their slots (a string's body, an array's or a
// hash's table, an extension's buffers), sampled by bytes by the preload library, each sample with
// the Ruby stack that allocated it. Present when libheaprec.so is preloaded in runtime mode
// (HEAPREC_RUNTIME=ruby: `heaprec run --ruby` sets it up); otherwise objects are measured as before
// (rb_obj_memsize_of at each dump). See "Bytes by bytes" in docs/design/ruby.md.
//
//   malloc (sampled by the preload library) ─▶ CompleteStack (this thread holds the GVL, no GC,
//     not heaprec's own allocation): native frames down to the interpreter + the Ruby frames
//   dump ─▶ AddNativeBlocks: the live sampled blocks join the dump's snapshot, tagged as bytes only
//
// Bytes are never counted twice: with native bytes on, an object counts the bytes of its slot
// only (heap pages are mmap'd, so no native sample holds them), and its body counts where malloc
// saw it.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/heap_profile_encoder.h"
#include "core/heap_snapshot.h"

namespace heaprec::ruby {

class HeapProfiler;

// Attaches to the preload library for `profiler` (GVL held), when it is there in runtime mode.
// Returns whether native bytes are sampled; the interval is then NativeByteInterval(profiler).
bool AttachNativeBytes(HeapProfiler* profiler);
// Detaches (GVL held): the library forgets every sample (their Ruby frames belong to `profiler`).
void DetachNativeBytes();
// The mean sampling interval in bytes while attached for `profiler`; 0 when native bytes are not
// sampled, or are sampled for another profiler (one started after `profiler` was stopped).
std::uint64_t NativeByteInterval(const HeapProfiler* profiler);
// The size of an object's slot: GC::INTERNAL_CONSTANTS[:RVALUE_SIZE], 40 on Ruby 3.1. (From 3.2
// slots come in several sizes and an object with its contents embedded takes a larger one; a
// profile counts it at this base size there.) GVL held.
std::uint64_t SlotSize();
// The estimated live native bytes (0 when not attached): for the peak watch (autorun.rb).
std::int64_t NativeLiveBytes();

// The pprof Mapping table of the native blocks' frames, as the preload library describes the
// loaded objects (its own profiles' table: dlclose'd libraries included), and the names of those
// frames in the profile: each is named after its mapped file ("[libruby.so.3.1]", as pprof shows
// a frame it cannot name) until a symbolizer renames it (`heaprec run`, `symbolize` and `fetch`
// do, from DWARF and symbol tables, keeping the file's name where they find none). A native frame
// with a name is one pprof can drop (schema::kNativeFrameNames), so that pprof charges the sample
// to the Ruby line above it, as heaprec's reports do.
struct CodeMappings final : AddressNamer {
  std::vector<ProfileMapping> mappings;  // sorted by start; their strings point into `names`
  std::deque<std::string> names;         // paths, build ids, frame names; a deque never moves them
  std::vector<const char*> frame_names;  // per mapping

  const char* Name(std::uint64_t address, std::size_t mapping,
                   std::uint64_t* function_key) const override;
  bool NamesMapping(std::size_t) const override { return true; }
};

// Adds the live sampled native blocks to `snapshot` with `tag`, and the mappings of their frames
// to `code`, when they are `profiler`'s (their Ruby frames are in its registry). False when memory
// ran out.
bool AddNativeBlocks(const HeapProfiler* profiler, HeapSnapshot& snapshot, std::uint64_t tag,
                     CodeMappings* code);

struct NativeByteStats {
  std::uint64_t with_ruby_stack;  // samples that got Ruby frames
  std::uint64_t native_only;      // samples of threads without the GVL, or during a GC
  std::uint64_t cut_by_fallback;  // no known interpreter frame found: native frames cut at a limit
};
NativeByteStats GetNativeByteStats();

}  // namespace heaprec::ruby
