/* heaprec: the interface between the preload library and a language runtime's front end.
 *
 * An interpreter's objects keep most of their bytes in native memory (a Ruby string's body, an
 * array's table, an extension's buffers), which only the preload library sees, sampled by bytes.
 * A runtime front end loaded into the same process (the Ruby extension) attaches to the library
 * with these functions: from then on every sampled native allocation of a thread that runs the
 * runtime's code carries that code's stack, root-ward of its native frames, and the front end reads
 * the live samples back at each of its dumps, into its own profile. The library itself writes no
 * profile while in this mode (HEAPREC_RUNTIME set): the front end owns every output.
 *
 * The front end finds these with dlsym(RTLD_DEFAULT, ...): present only when libheaprec.so is
 * preloaded with HEAPREC_RUNTIME. Frames are 64-bit values: a native frame is a return address
 * minus one, a runtime frame has HEAPREC_RUNTIME_FRAME_BIT set and is the runtime's own encoding.
 * Docs: docs/design/ruby.md, "Bytes by bytes".
 */
#ifndef HEAPREC_RUNTIME_H_
#define HEAPREC_RUNTIME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPREC_RUNTIME_FRAME_BIT (UINT64_C(1) << 63)

/* Returned by a stack completer for an allocation that is not to be recorded (the runtime's
 * profiler's own memory). */
#define HEAPREC_RUNTIME_SKIP UINT32_MAX

/* Called for each sampled allocation, on the allocating thread, inside malloc: `frames` holds its
 * native frames (leaf first, `depth` of them) with room for `capacity`. The runtime keeps the
 * native frames down to where its interpreter called them, appends its own frames and returns the
 * new depth; or leaves the stack as it is (a thread that is not running the runtime's code, or a
 * moment when the runtime's stack cannot be read safely). Must not allocate through the runtime;
 * malloc is allowed (it is not sampled while this runs). */
typedef uint32_t (*heaprec_stack_completer)(uint64_t* frames, uint32_t depth, uint32_t capacity);

/* Starts sampling native allocations for the runtime, with `completer` (from the runtime's
 * thread). Returns the mean sampling interval in bytes, or 0 when the library cannot (not in
 * runtime mode, or profiling is off). Attaching again replaces the completer. */
uint64_t heaprec_runtime_attach(heaprec_stack_completer completer);

/* Stops sampling and forgets every live sample: their runtime frames are about to mean nothing. */
void heaprec_runtime_detach(void);

/* One group of live sampled blocks: same stack and size. */
struct heaprec_runtime_blocks {
  const uint64_t* frames; /* leaf first */
  uint32_t depth;
  uint64_t size;           /* bytes each block asked for */
  double weight;           /* the blocks they stand for (sum of 1/p) */
  uint64_t sampled;        /* sampled blocks in the group */
  uint64_t oldest_time_ns; /* CLOCK_REALTIME allocation time of the oldest, 0 if unknown */
};

/* One executable segment of a loaded object: an entry of the pprof Mapping table. */
struct heaprec_runtime_mapping {
  uint64_t start, limit, file_offset; /* page-aligned, as /proc/self/maps shows them */
  const char* path;
  const char* build_id; /* lowercase hex, "" when unknown */
};

/* Calls visit(context, group) for every group of live sampled blocks (visit returns 0 to stop),
 * then visit_mapping(context, mapping) for every segment that holds one of their native frames,
 * sorted by start: the Mapping table the library's own profiles carry, dlclose'd libraries
 * included. The pointers are valid during the call only. Returns 0, or a negative errno value
 * (-ENOMEM, -ENOSYS when not attached). Recording goes on meanwhile. Not from a signal handler. */
int heaprec_runtime_live_blocks(
    int (*visit)(void* context, const struct heaprec_runtime_blocks* group),
    void (*visit_mapping)(void* context, const struct heaprec_runtime_mapping* mapping),
    void* context);

/* The estimated bytes of the live sampled blocks (each block's size times its weight): for a
 * front end's peak detection. Lock-free; 0 when not attached. */
int64_t heaprec_runtime_live_bytes(void);

/* The calling thread's native stack (leaf first: its caller's frame first), as a sample's native
 * frames are: for a runtime to learn where its interpreter calls native code. Returns the depth. */
uint32_t heaprec_runtime_native_stack(uint64_t* frames, uint32_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* HEAPREC_RUNTIME_H_ */
