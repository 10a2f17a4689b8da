// Start-up and the end of the process. The library's constructor reads the settings, checks that
// profiles can be written where the user asked (finding out at exit would lose the profile), that
// the program's malloc is really heaprec's, then creates the arena, registers the fork handlers,
// creates and publishes the recorder, which switches the hooks' slow paths on (a dormant process
// defers that to its first attach, attach/dormant.h), and installs the signal handlers. Any failure
// leaves the program running as if heaprec were absent, with at most one line on stderr. Its
// destructor writes the exit profile, after the program's static destructors and atexit handlers:
// the leak view.
#include "preload/startup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "core/arena.h"
#include "core/own_descriptors.h"
#include "preload/alloc/real_allocator.h"
#include "preload/alloc/sampling.h"
#include "preload/attach/injected.h"
#include "preload/control/settings.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/dump/profile_writer.h"
#include "preload/dump/timeline.h"
#include "preload/http/server.h"
#include "preload/messages.h"
#include "preload/objects/loaded_objects.h"
#include "preload/process/endings.h"
#include "preload/process/environment.h"
#include "preload/process/fork_handlers.h"
#include "preload/process/identity_hooks.h"
#include "preload/process/own_process.h"
#include "preload/process/signal_table.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "preload/unwind/unwinder.h"
#include "schema/attach.h"

extern "C" char* program_invocation_short_name;  // glibc: the program's base name, no allocation

namespace heaprec::preload {
namespace {

// Placement storage: these must not have dynamic initializers, which could run after the first
// allocation hook already used them. In a dormant process that is never attached the recorder's
// pages are never touched, so they cost no memory.
alignas(MmapArena) unsigned char g_arena_storage[sizeof(MmapArena)];
alignas(HeapRecorder) unsigned char g_recorder_storage[sizeof(HeapRecorder)];

// Makes a relative output template absolute against the start-up directory, so that a program that
// changes directory still writes its profile where the user asked.
bool AnchorOutputTemplate() {
  if (g_settings.output_template[0] == '/') return true;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return false;
  std::size_t cwd_length = strlen(cwd), template_length = strlen(g_settings.output_template);
  if (cwd_length + 1 + template_length + 1 > sizeof(g_settings.output_template)) return false;
  memmove(g_settings.output_template + cwd_length + 1, g_settings.output_template,
          template_length + 1);
  memcpy(g_settings.output_template, cwd, cwd_length);
  g_settings.output_template[cwd_length] = '/';
  return true;
}

// A template naming a directory (ending in '/', or without a '%' and a directory now) means the
// default name in it, as `heaprec run -o DIR` does: otherwise every process would fail to write
// its profile over the directory. Called on the anchored template.
bool NameProfilesInOutputDirectory() {
  char* output = g_settings.output_template;
  std::size_t length = strlen(output);
  bool directory = output[length - 1] == '/';
  if (!directory && strchr(output, '%') == nullptr) {
    struct stat status;
    directory = stat(output, &status) == 0 && S_ISDIR(status.st_mode);
  }
  if (!directory) return true;
  while (length > 1 && output[length - 1] == '/') --length;
  if (length == 1) length = 0;  // "/": the root's slash is the one added below
  if (length + 1 + sizeof(kDefaultOutputTemplate) > sizeof(g_settings.output_template)) {
    return false;
  }
  output[length] = '/';
  memcpy(output + length + 1, kDefaultOutputTemplate, sizeof(kDefaultOutputTemplate));
  return true;
}

// The output directory must exist and be writable now; finding out at exit would lose the profile.
bool CheckOutputDirectory() {
  char directory[PATH_MAX];
  const char* slash = strrchr(g_settings.output_template, '/');
  std::size_t length = static_cast<std::size_t>(slash - g_settings.output_template);
  if (length == 0) length = 1;  // "/"
  memcpy(directory, g_settings.output_template, length);
  directory[length] = '\0';
  if (strchr(directory, '%') != nullptr)
    return true;  // depends on the pid or time: checked at dump
  if (access(directory, W_OK | X_OK) == 0) return true;
  int error = errno;
  if (error == EACCES && UseFallbackDirectoryIfPrepared(directory)) return true;
  // A typo in the path (ENOENT) is the common case: say it in words, as `heaprec run -o` does.
  const bool missing = error == ENOENT;
  const char* parts[] = {"heaprec: HEAPREC_OUTPUT='",
                         g_settings.output_template,
                         "' is invalid: directory '",
                         directory,
                         missing ? "' does not exist" : "' is not writable (",
                         missing ? "" : strerrordesc_np(error),
                         missing ? "" : ")",
                         "; profiling is off for this process\n"};
  ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
  return false;
}

// With --no-follow and no pid to pin to, programs this one starts must not load heaprec: take it
// out of LD_PRELOAD (keeping any other preloaded libraries).
void StopFollowingExec() {
  const char* preload = EnvironmentValue("LD_PRELOAD");
  if (preload == nullptr) return;
  static constexpr char kName[] = "LD_PRELOAD=";
  static char entry[sizeof(kName) + PATH_MAX * 2];  // the environment keeps pointing at it
  memcpy(entry, kName, sizeof(kName));
  std::size_t out = sizeof(kName) - 1, start_of_value = out;
  const char* p = preload;
  while (*p != '\0') {
    while (*p == ' ' || *p == ':') ++p;
    const char* start = p;
    while (*p != '\0' && *p != ' ' && *p != ':') ++p;
    std::size_t length = static_cast<std::size_t>(p - start);
    if (length == 0) break;
    bool is_heaprec = memmem(start, length, "libheaprec", 10) != nullptr;
    if (!is_heaprec && out + length + 2 < sizeof(entry)) {
      if (out != start_of_value) entry[out++] = ':';
      memcpy(entry + out, start, length);
      out += length;
    }
  }
  entry[out] = '\0';
  if (out == start_of_value) {
    RemoveFromEnvironment("LD_PRELOAD");
  } else {
    ReplaceInEnvironment("LD_PRELOAD", entry);
  }
}

// When the process began (before any exec), from /proc/self/stat: profiles already on disk that
// are newer belong to an earlier program of this process, and are never overwritten.
std::uint64_t ProcessStartNs() {
  std::uint64_t fallback = NowNs(CLOCK_REALTIME);
  char text[1024];
  if (ReadSmallFile("/proc/self/stat", text, sizeof(text)) <= 0) return fallback;
  // Field 22, starttime in clock ticks since boot, counted after the ")" that ends the name.
  const char* p = strrchr(text, ')');
  if (p == nullptr) return fallback;
  for (int field = 2; field < 22 && *p != '\0'; ++p) {
    if (*p == ' ') ++field;
  }
  std::uint64_t ticks = 0;
  for (; *p >= '0' && *p <= '9'; ++p) ticks = ticks * 10 + static_cast<std::uint64_t>(*p - '0');
  long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return fallback;
  std::uint64_t since_boot = ticks * (1000000000ull / static_cast<std::uint64_t>(ticks_per_second));
  std::uint64_t boot = NowNs(CLOCK_REALTIME) - NowNs(CLOCK_BOOTTIME);
  return boot + since_boot;
}

}  // namespace

void StartRecording() {
  if (g_recorder.load(std::memory_order_acquire) != nullptr) return;
  // libgcc_s was loaded in the constructor (LoadUnwinderLibrary): nothing here calls the loader.
  InitUnwinder(g_settings.unwind, *g_arena);
  // Under the dump locks, which fork() takes first: a child sees the recorder absent or complete.
  LockDumps();
  RecorderOptions options;
  g_recorder.store(new (g_recorder_storage) HeapRecorder(*g_arena, options),
                   std::memory_order_release);
  UnlockDumps();
}

namespace {

// What every process heaprec profiles needs before its recorder: the times and identity its
// profiles name, the profiler's memory, the fork handlers, the unwinder's library.
void PrepareProcess() {
  g_start_time_ns = NowNs(CLOCK_REALTIME);
  StartTimeline(g_start_time_ns);
  g_process_start_ns = ProcessStartNs();
  RememberOwnPid();
  RememberExecutablePath();
  g_interval.store(g_settings.sample_interval);
  g_arena = new (g_arena_storage) MmapArena();  // maps nothing until first used
  InstallForkHandlers();
  LoadUnwinderLibrary(g_settings.unwind);  // every mode: the loader only here (unwinder.h)
}

void StartThreads() {
  InstallSignalHandlers(g_settings.dump_signal);
  StartDumpThreadIfConfigured();
  StartHttpServerIfConfigured();
}

}  // namespace

void StartInjectedProcess() {
  HookGuard guard;
  RememberStderr();
  RememberProgramName();
  PrepareProcess();
  NoteHandlersInPlace();
  StartThreads();
}

namespace {

__attribute__((constructor(101))) void StartProfiler() {
  ResolveRealAllocator();                 // usually done already, by the first allocation
  if (getauxval(AT_SECURE) != 0) return;  // setuid/setgid: stay out of the way entirely
  // Loaded by `heaprec attach`, which sets the library up itself (attach/injected.h).
  if (LoadedByAttach()) {
    NameLoadedObject(nullptr);
    return;
  }
  HookGuard guard;
  RememberStderr();
  RememberProgramName();
  if (!ReadSettings(&g_settings)) return;
  if (g_settings.only_pid != 0 && g_settings.only_pid != getpid()) return;
  if (g_settings.no_follow && g_settings.only_pid == 0) StopFollowingExec();
  if (!g_settings.runtime &&
      (!AnchorOutputTemplate() || !NameProfilesInOutputDirectory() || !CheckOutputDirectory())) {
    return;
  }
  bool in_executable = false;
  if (const char* foreign = ForeignProgramMalloc(&in_executable)) {
    const char* library[] = {
        "heaprec: malloc comes from ", foreign,
        ", loaded before libheaprec.so; nothing can be profiled: put libheaprec.so "
        "first in LD_PRELOAD\n"};
    const char* executable[] = {
        "heaprec: the program defines its own malloc (", program_invocation_short_name,
        " has its allocator built in), which LD_PRELOAD cannot replace; nothing can be "
        "profiled\n"};
    if (in_executable) {
      WriteStderr(executable, sizeof(executable) / sizeof(executable[0]));
    } else {
      WriteStderr(library, sizeof(library) / sizeof(library[0]));
    }
    return;
  }
  PrepareProcess();
  // Runtime mode: recording starts when the runtime's front end attaches (heaprec_runtime_attach),
  // and that front end has the signal handlers, threads and outputs.
  if (g_settings.runtime) {
    PublishLoadMode(schema::kModeRuntime, 0);
    return;
  }
  PublishLoadMode(g_settings.dormant ? schema::kModeDormant : schema::kModeStarted,
                  g_settings.dump_signal);
  // A dormant process defers the recorder and the unwinder's tables to its first attach, on the
  // dump thread (attach/dormant.h): until then it costs only the hooks' own instructions.
  if (!g_settings.dormant) {
    StartRecording();
    SetSampling(true);
  }
  StartThreads();
}

__attribute__((destructor(101))) void StopProfiler() {
  StopHttpServerAtExit();  // also in a dormant process never attached, which has no recorder
  if (g_recorder.load(std::memory_order_acquire) == nullptr) return;
  DumpFinal(DumpReason::kExit, 0);
  // Recording goes on: frees from later destructors still find consistent tables.
}

}  // namespace
}  // namespace heaprec::preload
