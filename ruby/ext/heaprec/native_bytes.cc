#include "native_bytes.h"

#include <dlfcn.h>
#include <ruby.h>
#include <ruby/thread.h>

#include <atomic>
#include <cstring>

#include "frame_registry.h"
#include "heap_profiler.h"
#include "heaprec/runtime.h"

// Exported by libruby but not declared in its public headers: whether the calling thread is a Ruby
// thread that holds the GVL now (0 for any other thread), and whether a GC is running.
extern "C" int ruby_thread_has_gvl_p(void);
extern "C" int rb_during_gc(void);

// libgcc's lookup of the unwind table entry (FDE) that covers `pc`, and the function it starts at.
struct DwarfEhBases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, DwarfEhBases* bases);

namespace heaprec::ruby {
namespace {

// The preload library's runtime interface (include/heaprec/runtime.h), found at attach.
struct RuntimeInterface {
  decltype(&heaprec_runtime_attach) attach = nullptr;
  decltype(&heaprec_runtime_detach) detach = nullptr;
  decltype(&heaprec_runtime_live_blocks) live_blocks = nullptr;
  decltype(&heaprec_runtime_native_stack) native_stack = nullptr;
  decltype(&heaprec_runtime_live_bytes) live_bytes = nullptr;
};
RuntimeInterface g_runtime;

HeapProfiler* g_attached = nullptr;  // set and cleared with the GVL held
std::uint64_t g_interval = 0;

// Where the interpreter runs Ruby code and calls C: the functions (address ranges) of the frames
// that called a probe method written in C, however it was called (LearnInterpreterFrames). A
// sample's native frames are kept down to the first frame in one of them; the Ruby frames that
// led there take their place. Written once, before sampling starts.
struct CodeRange {
  std::uint64_t start, end;
};
constexpr int kMaxInterpreterRanges = 32;
CodeRange g_interpreter[kMaxInterpreterRanges];
int g_interpreter_count = 0;

// Native frames kept when none is found in the interpreter (a stack deeper than the walk, or a
// path the probes did not take): enough for the allocator's callers, not the interpreter's loop.
constexpr std::uint32_t kFallbackNativeFrames = 8;

std::atomic<std::uint64_t> g_with_ruby_stack{0}, g_native_only{0}, g_cut_by_fallback{0};

// The function containing `pc`, from its unwind table entry. x86-64's .eh_frame encodes an FDE's
// start as a 4-byte pc-relative offset and its length as 4 bytes, after the entry's length and CIE
// pointer; the start libgcc decoded itself (bases.func) checks that reading.
bool FunctionRange(std::uint64_t pc, CodeRange* range) {
  DwarfEhBases bases = {};
  const auto* fde =
      static_cast<const unsigned char*>(_Unwind_Find_FDE(reinterpret_cast<void*>(pc), &bases));
  if (fde == nullptr) return false;
  std::int32_t offset;
  std::uint32_t length;
  memcpy(&offset, fde + 8, sizeof(offset));
  memcpy(&length, fde + 12, sizeof(length));
  const std::uint64_t start = reinterpret_cast<std::uint64_t>(fde + 8) + offset;
  if (start != reinterpret_cast<std::uint64_t>(bases.func) || pc < start || pc >= start + length) {
    return false;
  }
  *range = {start, start + length};
  return true;
}

void AddInterpreterFrame(std::uint64_t pc) {
  CodeRange range;
  if (!FunctionRange(pc, &range)) range = {pc, pc + 1};  // at least this call site
  for (int i = 0; i < g_interpreter_count; ++i) {
    if (g_interpreter[i].start == range.start) return;
  }
  if (g_interpreter_count < kMaxInterpreterRanges) g_interpreter[g_interpreter_count++] = range;
}

// Heaprec::NativeProbe.probe: the two frames above it are the interpreter's (the one that called
// this C method, and its caller).
VALUE Probe(int, VALUE*, VALUE) {
  std::uint64_t frames[3];
  std::uint32_t depth = g_runtime.native_stack(frames, 3);
  for (std::uint32_t i = 1; i < depth; ++i) AddInterpreterFrame(frames[i]);
  return Qnil;
}

VALUE RunProbes(VALUE) {
  // Each way Ruby calls a method written in C: an ordinary call, send, public_send (through
  // rb_funcall's path), a Method object, from a block, and as a block itself.
  return rb_eval_string(
      "p = Heaprec::NativeProbe; p.probe; p.send(:probe); p.public_send(:probe); "
      "p.method(:probe).call; [0].each { p.probe }; [0].each(&p.method(:probe))");
}

void LearnInterpreterFrames() {
  if (g_interpreter_count != 0) return;
  VALUE module = rb_define_module_under(rb_define_module("Heaprec"), "NativeProbe");
  rb_define_singleton_method(module, "probe", Probe, -1);
  int state = 0;
  rb_protect(RunProbes, Qnil, &state);
  if (state != 0) rb_set_errinfo(Qnil);  // then stacks are cut at kFallbackNativeFrames
}

// How many of a sample's native frames (leaf first) are the allocation's own: those before the
// first frame in the interpreter.
std::uint32_t NativeFramesToKeep(const std::uint64_t* frames, std::uint32_t depth) {
  for (std::uint32_t i = 0; i < depth; ++i) {
    for (int r = 0; r < g_interpreter_count; ++r) {
      if (frames[i] >= g_interpreter[r].start && frames[i] < g_interpreter[r].end) return i;
    }
  }
  g_cut_by_fallback.fetch_add(1, std::memory_order_relaxed);
  return depth < kFallbackNativeFrames ? depth : kFallbackNativeFrames;
}

// A sample's native stack with a marker frame that says why it has no Ruby stack, so that a
// report names its site ("(garbage collector)") rather than an address.
std::uint32_t WithMarker(std::uint64_t* frames, std::uint32_t depth, std::uint32_t capacity,
                         std::uint32_t marker) {
  g_native_only.fetch_add(1, std::memory_order_relaxed);
  if (depth >= capacity) return depth;
  frames[depth] = FrameRegistry::Encode(marker, 0);
  return depth + 1;
}

// The preload library's stack completer (heaprec_stack_completer), inside malloc. The Ruby stack
// is read only where that is safe: a Ruby thread holding the GVL (which keeps the VM's frames
// still and orders this with the profiler's own work), outside a GC (which moves and frees what
// the frames point at). Anywhere else the sample keeps its native stack, with a marker.
std::uint32_t CompleteStack(std::uint64_t* frames, std::uint32_t depth, std::uint32_t capacity) {
  // heaprec's own allocations: the profiler's lists and tables, a dump's names and encoding.
  if (HookSuppressedOnThisThread()) return HEAPREC_RUNTIME_SKIP;
  if (ruby_thread_has_gvl_p() == 0) {
    return WithMarker(frames, depth, capacity, FrameRegistry::kWithoutGvlIndex);
  }
  if (rb_during_gc() != 0) {
    return WithMarker(frames, depth, capacity, FrameRegistry::kGarbageCollectorIndex);
  }
  if (g_attached == nullptr) return depth;  // attaching or detaching: recorded, then forgotten
  SuppressHookOnThisThread(true);
  const std::uint32_t kept = NativeFramesToKeep(frames, depth);
  const std::uint32_t ruby = g_attached->EncodeStackForNativeSample(frames + kept, capacity - kept);
  SuppressHookOnThisThread(false);
  if (ruby == 0) {  // no Ruby frame yet (the VM starting a thread), or out of memory
    g_native_only.fetch_add(1, std::memory_order_relaxed);
    return depth;
  }
  g_with_ruby_stack.fetch_add(1, std::memory_order_relaxed);
  return kept + ruby;
}

template <typename Function>
bool Find(const char* name, Function* out) {
  *out = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
  return *out != nullptr;
}

struct AddContext {
  HeapSnapshot* snapshot;
  std::uint64_t tag;
  CodeMappings* code;
  bool ok;
};

int AddGroup(void* context, const heaprec_runtime_blocks* group) {
  auto* add = static_cast<AddContext*>(context);
  HeapSnapshot::Object object = {};
  object.size = group->size;
  object.weight = group->weight;
  object.alloc_time_ns = group->oldest_time_ns;
  object.tag = add->tag;
  object.count = group->sampled;
  add->ok = add->snapshot->AddObject(group->frames, group->depth, object);
  return add->ok ? 1 : 0;
}

void AddMapping(void* context, const heaprec_runtime_mapping* mapping) {
  CodeMappings& code = *static_cast<AddContext*>(context)->code;
  const std::string& path = code.names.emplace_back(mapping->path);
  const std::string& build_id = code.names.emplace_back(mapping->build_id);
  code.mappings.push_back(
      {mapping->start, mapping->limit, mapping->file_offset, path.c_str(), build_id.c_str()});
  // "[libruby.so.3.1]"; a pseudo file ("[vdso]") keeps its own brackets.
  std::string base = path.substr(path.rfind('/') + 1);
  if (base.empty()) base = "anonymous";
  if (base.front() != '[') base = '[' + base + ']';
  code.frame_names.push_back(code.names.emplace_back(std::move(base)).c_str());
}

}  // namespace

bool AttachNativeBytes(HeapProfiler* profiler) {
  if (g_runtime.attach == nullptr &&
      !(Find("heaprec_runtime_attach", &g_runtime.attach) &&
        Find("heaprec_runtime_detach", &g_runtime.detach) &&
        Find("heaprec_runtime_live_blocks", &g_runtime.live_blocks) &&
        Find("heaprec_runtime_native_stack", &g_runtime.native_stack) &&
        Find("heaprec_runtime_live_bytes", &g_runtime.live_bytes))) {
    g_runtime = {};
    return false;
  }
  // Sampling starts here, while this thread's allocations are heaprec's (the probes').
  bool was_suppressed = SuppressHookOnThisThread(true);
  g_attached = profiler;
  g_interval = g_runtime.attach(CompleteStack);
  if (g_interval != 0) LearnInterpreterFrames();
  SuppressHookOnThisThread(was_suppressed);
  if (g_interval == 0) g_attached = nullptr;
  return g_attached != nullptr;
}

void DetachNativeBytes() {
  if (g_attached == nullptr) return;
  g_attached = nullptr;
  g_interval = 0;
  g_runtime.detach();
}

std::uint64_t NativeByteInterval(const HeapProfiler* profiler) {
  return g_attached != nullptr && g_attached == profiler ? g_interval : 0;
}

std::uint64_t SlotSize() {
  static std::uint64_t size = 0;
  if (size == 0) {
    VALUE constants = rb_const_get(rb_mGC, rb_intern("INTERNAL_CONSTANTS"));
    VALUE slot = rb_hash_aref(constants, ID2SYM(rb_intern("RVALUE_SIZE")));
    size = RB_FIXNUM_P(slot) ? static_cast<std::uint64_t>(FIX2LONG(slot)) : 40;
  }
  return size;
}

std::int64_t NativeLiveBytes() { return g_attached != nullptr ? g_runtime.live_bytes() : 0; }

bool AddNativeBlocks(const HeapProfiler* profiler, HeapSnapshot& snapshot, std::uint64_t tag,
                     CodeMappings* code) {
  if (g_attached == nullptr || g_attached != profiler) return true;
  AddContext context = {&snapshot, tag, code, true};
  int result = g_runtime.live_blocks(AddGroup, AddMapping, &context);
  return result == 0 && context.ok;
}

const char* CodeMappings::Name(std::uint64_t, std::size_t mapping,
                               std::uint64_t* function_key) const {
  if (mapping >= frame_names.size()) {
    *function_key = frame_names.size();  // one name for every frame outside the table
    return "[unmapped]";
  }
  *function_key = mapping;
  return frame_names[mapping];
}

NativeByteStats GetNativeByteStats() {
  return {g_with_ruby_stack.load(), g_native_only.load(), g_cut_by_fallback.load()};
}

}  // namespace heaprec::ruby
