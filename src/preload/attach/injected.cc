// The library injected by `heaprec attach` (injected.h, docs/design/attach.md).
#include "preload/attach/injected.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "core/appender.h"
#include "core/own_descriptors.h"
#include "preload/alloc/real_allocator.h"
#include "preload/alloc/sampling.h"
#include "preload/attach/dormant.h"
#include "preload/attach/got_patch.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/export.h"
#include "preload/http/server.h"
#include "preload/process/environment.h"
#include "preload/process/process_memory.h"
#include "preload/record/heap_record.h"
#include "preload/startup.h"
#include "preload/state.h"

extern "C" const ElfW(Ehdr) __ehdr_start;  // heaprec's own ELF header

// Read by the CLI with process_vm_readv (schema/attach.h). Written by the library only.
extern "C" __attribute__((visibility("default")))
heaprec::schema::ControlBlock heaprec_control_block;
heaprec::schema::ControlBlock heaprec_control_block = {
    "heaprec-ctl", heaprec::schema::kControlVersion, heaprec::schema::kModeNone, 0, 0, 0, 0, 0};

namespace heaprec::preload {
namespace {

using schema::AttachRequest;

constexpr std::uint64_t kWorkPeriodNs = 100 * 1000000ull;  // new objects are routed this soon
constexpr std::uint64_t kHeapSamplePeriodNs = 2000 * 1000000ull;

std::atomic<std::int32_t> g_pending{0};  // an AttachCommand not carried out yet, or 0
std::atomic<int> g_pending_directory{-1};
char g_pending_name[sizeof(AttachRequest::file_name)];
char g_settings_block[sizeof(AttachRequest::settings)];  // stays valid: UseSettingsBlock
void* g_handle = nullptr;
bool g_started = false;  // the first start's set-up was done (only the calling thread's, once)
int g_directory = -1;    // where profiles go: the directory `heaprec attach` handed over
char g_profile_name[sizeof(Settings::output_template)];  // the template's file name, from the first

std::atomic<std::uint64_t> g_held_at_attach{0};
std::atomic<std::uint64_t> g_rss_at_attach{0};
std::atomic<std::uint64_t> g_in_use{0};
std::atomic<std::uint64_t> g_unattributed{0};
std::uint64_t g_next_heap_sample_ns = 0;
// A later attach's --http address ("" for none): UseLaterSettings on the held thread, served from
// by the dump thread.
char g_later_http[256];
// The heap before the attach by block size, as the attaching command read it: the largest size
// classes as "CLASS:BYTES:BLOCKS,..." (schema/profile_schema.h, kHeldBySizeField), and their total.
char g_held_by_size[320];  // six classes at 20-digit counts fit
std::uint64_t g_held_walked = 0;
constexpr int kHeldClassesShown = 6;

// The one descriptor sent on `socket` (SCM_RIGHTS), moved to heaprec's range; -1 when none came.
int ReceiveDescriptor(int socket) {
  char byte;
  iovec data = {&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr message = {};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  if (recvmsg(socket, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1) return -1;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (header == nullptr || header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS ||
      header->cmsg_len != CMSG_LEN(sizeof(int))) {
    return -1;
  }
  int fd;
  memcpy(&fd, CMSG_DATA(header), sizeof(fd));
  return MoveToOwnRange(fd);
}

// "/proc/self/fd/N/NAME": the directory the attaching command opened, in whatever mount namespace
// this process lives, without a path that must exist here.
bool InDirectory(int directory, const char* name, char* out, std::size_t capacity) {
  Appender path(out, capacity);
  path.Add("/proc/self/fd/");
  path.AddUnsigned(static_cast<std::uint64_t>(directory), 1);
  path.Add("/");
  path.Add(name);
  return path.Finish();
}

// The output template: the handed-over directory and the first attach's file name.
bool UseDirectory(int directory) {
  char output[sizeof(g_settings.output_template)];
  if (!InDirectory(directory, g_profile_name, output, sizeof(output))) return false;
  LockDumps();
  memcpy(g_settings.output_template, output, strlen(output) + 1);
  UnlockDumps();
  return true;
}

// After a detach nothing is written until the next attach hands a directory over, and the
// program's descriptor table is its own again (a profile written through a descriptor number the
// program has reused would land in the program's directory).
void ForgetDirectory() {
  LockDumps();
  g_settings.output_template[0] = '\0';  // ExpandProfileName: nowhere to write
  UnlockDumps();
  if (g_directory >= 0) close(g_directory);
  g_directory = -1;
}

// dlopen's handle of this library, found by the name the loader knows it by (no file is opened
// for a name already loaded).
void* OwnHandle() {
  Dl_info info;
  if (dladdr(&__ehdr_start, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  return dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
}

// The first start: everything the constructor of a started process does, from the request's
// settings. On the thread `heaprec attach` holds, before the dump thread exists.
bool FirstStart(const AttachRequest& request, int directory) {
  memcpy(g_settings_block, request.settings, sizeof(g_settings_block));
  g_settings_block[sizeof(g_settings_block) - 2] = '\0';
  g_settings_block[sizeof(g_settings_block) - 1] = '\0';
  UseSettingsBlock(g_settings_block);
  Settings settings;
  if (!ReadSettings(&settings)) return false;
  settings.dormant = true;  // attach and detach are the dormant process's (dormant.h)
  settings.quiet = true;    // the program's stderr is the program's
  g_settings = settings;
  const char* slash = strrchr(g_settings.output_template, '/');
  const char* name = slash != nullptr ? slash + 1 : g_settings.output_template;
  memcpy(g_profile_name, name, strlen(name) + 1);
  if (!UseDirectory(directory)) return false;
  g_handle = reinterpret_cast<void*>(request.library_handle);
  if (g_handle == nullptr) g_handle = OwnHandle();  // loaded by an attach that was interrupted
  UseUntaggedBlocks();
  if (!PrepareHooks(g_handle)) return false;
  // The signal, exit and exec entry points first, so that the program's sigaction calls from here
  // on see its own dispositions while heaprec installs its handlers (signal_table.h).
  RouteHooks(HookSet::kProcessOnly);
  StartInjectedProcess();
  return true;
}

bool IsGlibc() { return g_real.glibc; }

// Keeps the largest classes of the request's walk of the heap (only glibc's heap was walked).
void RememberHeldBySize(const AttachRequest& request) {
  if (!IsGlibc() || request.held_walked == 0) return;
  bool shown[schema::kHeapSizeClasses] = {};
  Appender text(g_held_by_size, sizeof(g_held_by_size));
  for (int n = 0; n < kHeldClassesShown; ++n) {
    int largest = -1;
    for (int k = 0; k < schema::kHeapSizeClasses; ++k) {
      if (!shown[k] && request.held_by_size[k].bytes != 0 &&
          (largest < 0 || request.held_by_size[k].bytes > request.held_by_size[largest].bytes)) {
        largest = k;
      }
    }
    if (largest < 0) break;
    shown[largest] = true;
    if (n > 0) text.Add(",");
    text.AddUnsigned(static_cast<unsigned>(largest), 1);
    text.Add(":");
    text.AddUnsigned(request.held_by_size[largest].bytes, 1);
    text.Add(":");
    text.AddUnsigned(request.held_by_size[largest].blocks, 1);
  }
  if (!text.Finish()) g_held_by_size[0] = '\0';
  g_held_walked = request.held_walked;
}

std::uint64_t ResidentBytes() {
  std::uint64_t resident, file_backed;
  ReadResidentBytes(&resident, &file_backed);
  return resident;
}

// glibc's bytes in use: every arena's allocated chunks and the mmapped blocks. mallinfo2 takes
// each arena's lock briefly; called on the dump thread only, never from a handler.
std::uint64_t HeapInUse() {
  MallocStats stats;
  ReadMallocStats(&stats);
  return stats.in_use;
}

void SampleHeap(bool at_attach) {
  std::uint64_t in_use = HeapInUse();
  g_in_use.store(in_use);
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  std::int64_t sampled = recorder != nullptr ? recorder->LiveBytesEstimate() : 0;
  std::uint64_t rest = sampled > 0 && static_cast<std::uint64_t>(sampled) < in_use
                           ? in_use - static_cast<std::uint64_t>(sampled)
                           : (sampled > 0 ? 0 : in_use);
  if (at_attach) {
    if (g_held_at_attach.load() == 0) {
      g_held_at_attach.store(in_use);
      g_rss_at_attach.store(ResidentBytes());
      g_unattributed.store(in_use);
    }
  } else if (rest < g_unattributed.load()) {
    // Pre-attach blocks are only ever freed: what is left of them never grows.
    g_unattributed.store(rest);
  }
  // The heap at death says it too (and the record takes them when it is made).
  LockDumpOnly();
  NoteAttachInHeapRecord();
  UnlockDumpOnly();
}

// After a detach: no sample stays tracked (see kCommandDetach).
void ForgetEverySample() {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return;
  recorder->ForgetAll();
}

void Finish(int result) {
  heaprec_control_block.last_result = result;
  __atomic_add_fetch(&heaprec_control_block.commands_done, 1, __ATOMIC_RELEASE);
}

// A later attach's --sample-interval and --http (the other settings are the first attach's: its
// threads and handlers are in place). The address is served from on the dump thread (CarryOut).
void UseLaterSettings(const char* block) {
  static constexpr char kInterval[] = "HEAPREC_SAMPLE_INTERVAL=";
  static constexpr char kHttp[] = "HEAPREC_HTTP=";
  std::uint64_t interval = kDefaultSampleInterval;
  g_later_http[0] = '\0';
  for (const char* entry = block; *entry != '\0' && entry < block + sizeof(AttachRequest::settings);
       entry += strlen(entry) + 1) {
    if (strncmp(entry, kInterval, sizeof(kInterval) - 1) == 0) {
      if (!ParseByteCount(entry + sizeof(kInterval) - 1, &interval)) return;
    }
    if (strncmp(entry, kHttp, sizeof(kHttp) - 1) == 0) {
      Appender http(g_later_http, sizeof(g_later_http));
      http.Add(entry + sizeof(kHttp) - 1);
      if (!http.Finish()) g_later_http[0] = '\0';
    }
  }
  g_settings.sample_interval = interval;
  g_interval.store(interval);
}

// The attach itself, on the thread `heaprec attach` holds: done before the call returns, so that a
// process stopped with SIGSTOP, whose new dump thread cannot run, samples from its first
// instruction after SIGCONT. Takes only heaprec's own locks.
void StartOnCaller(int directory) {
  if (directory >= 0 && directory != g_directory && UseDirectory(directory)) {  // a later -o
    if (g_directory >= 0) close(g_directory);
    g_directory = directory;
  } else if (directory >= 0 && directory != g_directory) {
    close(directory);
  }
  AttachOnCaller();
  RouteHooks(HookSet::kAll);
  PublishSampling(IsActive());
}

// Returns the command's result for the control block.
int CarryOut(std::int32_t command) {
  int directory = g_pending_directory.exchange(-1);
  switch (command) {
    case schema::kCommandStart:  // started on the attach's thread (StartOnCaller)
      RunControlCommand();       // the thread's name says the state
      // A later attach's --http: the detach stopped the first one's server (the first attach's
      // was started with the process's threads).
      StartHttpServerAt(g_later_http, false);
      SampleHeap(true);
      return IsActive() ? 0 : ENOMEM;
    case schema::kCommandDetach: {
      // Sampling off first, then the profile (every free so far was seen), then every memory
      // entry point back to the program's, then the samples forgotten: their frees are not seen
      // from here on, so a later profile must not show them live.
      RequestDetach();
      RunControlCommand();
      int result = Dump(DumpReason::kDetach, nullptr);
      // The heap record follows the sampled heap, which nothing follows from here on: it ends with
      // the session, or a later kill would leave a stale heap at death (and an exit, a record
      // nobody removes). A later attach keeps none (EndHeapRecord is once per process).
      LockDumps();
      EndHeapRecord();
      UnlockDumps();
      RouteHooks(HookSet::kProcessOnly);
      ForgetEverySample();
      ForgetDirectory();
      // Nothing to serve any more, and the listening socket would stay in the program's
      // descriptor table; a later attach serves again with its own --http.
      StopHttpServer();
      PublishSampling(false);
      return result;
    }
    case schema::kCommandDump: {
      char path[PATH_MAX];
      int result = EINVAL;
      if (directory >= 0 && InDirectory(directory, g_pending_name, path, sizeof(path))) {
        result = Dump(DumpReason::kRequest, path);
      }
      if (directory >= 0) close(directory);
      return result;
    }
  }
  return EINVAL;
}

bool ReadLoadedByAttach() {
  Dl_info info;
  if (dladdr(&__ehdr_start, &info) == 0 || info.dli_fname == nullptr) return false;
  char target[64];
  ssize_t n = readlink(info.dli_fname, target, sizeof(target) - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  static constexpr char kPrefix[] = "/memfd:";
  return strncmp(target, kPrefix, sizeof(kPrefix) - 1) == 0 &&
         strncmp(target + sizeof(kPrefix) - 1, schema::kAttachMemfdName,
                 sizeof(schema::kAttachMemfdName) - 1) == 0;
}

}  // namespace

void NameLoadedObject(const char* path) {
  static constexpr char kNoFile[] = "/memfd:heaprec-attach (deleted)";  // as /proc/PID/maps shows
  const char* name = path != nullptr && path[0] == '/' ? path : kNoFile;
  Dl_info info;
  link_map* self = nullptr;
  if (dladdr1(&__ehdr_start, &info, reinterpret_cast<void**>(&self), RTLD_DL_LINKMAP) == 0 ||
      self == nullptr) {
    return;
  }
  std::size_t length = strlen(name);
  // glibc's malloc: the loader frees l_name with free() if the object is ever unloaded.
  char* copy = static_cast<char*>(__libc_malloc(length + 1));
  if (copy == nullptr) return;
  memcpy(copy, name, length + 1);
  // The old name is left as it is: a dl_iterate_phdr or dladdr in another thread may be reading it.
  __atomic_store_n(&self->l_name, copy, __ATOMIC_RELEASE);
}

bool LoadedByAttach() {
  // Asked first by the constructor, while the memfd the library was loaded from is still open.
  static int loaded_by_attach = -1;
  if (loaded_by_attach < 0) loaded_by_attach = ReadLoadedByAttach() ? 1 : 0;
  return loaded_by_attach == 1;
}

void PublishLoadMode(schema::LoadMode mode, int dump_signal) {
  heaprec_control_block.dump_signal = dump_signal;
  __atomic_store_n(&heaprec_control_block.mode, mode, __ATOMIC_RELEASE);
}

void PublishSampling(bool sampling) {
  __atomic_store_n(&heaprec_control_block.sampling, sampling ? 1 : 0, __ATOMIC_RELEASE);
}

void PublishHttpPort(int port) {
  __atomic_store_n(&heaprec_control_block.http_port, port, __ATOMIC_RELEASE);
}

std::uint64_t RunInjectedWork() {
  if (heaprec_control_block.mode != schema::kModeInjected &&
      g_pending.load(std::memory_order_acquire) == 0) {
    return UINT64_MAX;
  }
  std::int32_t command = g_pending.load(std::memory_order_acquire);
  if (command != 0) {
    int result = CarryOut(command);
    // Free for the next command before the CLI learns this one is done.
    g_pending.store(0, std::memory_order_release);
    Finish(result);
  }
  if (heaprec_control_block.mode != schema::kModeInjected) return UINT64_MAX;
  RouteHooksInNewObjects();
  std::uint64_t now = NowNs(CLOCK_MONOTONIC);
  if (IsActive() && now >= g_next_heap_sample_ns) {
    SampleHeap(false);
    g_next_heap_sample_ns = now + kHeapSamplePeriodNs;
  }
  return kWorkPeriodNs;
}

AttachFacts CurrentAttachFacts() {
  AttachFacts facts;
  facts.injected = heaprec_control_block.mode == schema::kModeInjected;
  if (!facts.injected) return facts;
  facts.heap_known = IsGlibc();
  facts.held_at_attach = g_held_at_attach.load();
  facts.in_use = g_in_use.load();
  facts.unattributed = g_unattributed.load();
  facts.rss_at_attach = g_rss_at_attach.load();
  facts.held_by_size = g_held_by_size;
  facts.held_walked = g_held_walked;
  return facts;
}

}  // namespace heaprec::preload

using heaprec::preload::g_pending;

// Called by `heaprec attach`, `detach` and `dump` on a thread of this process they hold with
// ptrace (schema/attach.h). Takes no lock that the program's threads could hold: the work is the
// dump thread's.
HEAPREC_EXPORT std::int32_t heaprec_attach_command(const heaprec::schema::AttachRequest* request) {
  namespace schema = heaprec::schema;
  namespace preload = heaprec::preload;
  if (request == nullptr || request->magic != schema::kRequestMagic)
    return schema::kResultBadRequest;
  std::int32_t command = request->command;
  bool controls_sampling = command == schema::kCommandStart || command == schema::kCommandDetach;
  // A process started under heaprec is controlled by its dump signal (dormant.h), not by this.
  if (controls_sampling && !preload::LoadedByAttach()) return schema::kResultNotInjected;
  if (g_pending.load() != 0) return schema::kResultBusy;
  if (command == schema::kCommandStart && heaprec_control_block.sampling != 0) {
    return schema::kResultAlreadyAttached;
  }
  if (command == schema::kCommandDetach && heaprec_control_block.sampling == 0) {
    return schema::kResultNotAttached;
  }
  int directory = request->handover_fd >= 0 ? preload::ReceiveDescriptor(request->handover_fd) : -1;
  if (command != schema::kCommandDetach && directory < 0) return schema::kResultBadRequest;
  const bool first_start = command == schema::kCommandStart && !preload::g_started;
  if (first_start) {
    if (!preload::FirstStart(*request, directory)) {
      close(directory);
      return schema::kResultBadRequest;
    }
    preload::g_started = true;
    preload::RememberHeldBySize(*request);
    preload::NameLoadedObject(request->library_path);
    preload::g_directory = directory;
    directory = -1;
    preload::PublishLoadMode(schema::kModeInjected, preload::g_settings.dump_signal);
  }
  if (command == schema::kCommandDump) {
    memcpy(preload::g_pending_name, request->file_name, sizeof(preload::g_pending_name));
    preload::g_pending_name[sizeof(preload::g_pending_name) - 1] = '\0';
  }
  if (command == schema::kCommandStart) {
    preload::UseLaterSettings(request->settings);
    // The first attach's --http was served from by FirstStart's threads (or said why not).
    if (first_start) preload::g_later_http[0] = '\0';
    preload::StartOnCaller(directory);
    directory = -1;
  }
  preload::g_pending_directory.store(directory);
  g_pending.store(command, std::memory_order_release);
  preload::StartDumpThread();
  preload::WakeDumpThread();
  return schema::kResultQueued;
}
