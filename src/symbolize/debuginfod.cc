#include "symbolize/debuginfod.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace heaprec::symbolize {
namespace {

// libdebuginfod takes its servers from DEBUGINFOD_URLS only, read at each query: the variable
// holds this client's URLs for the query, then what it held before.
class ScopedUrls {
 public:
  explicit ScopedUrls(const std::string& urls) {
    if (const char* old = std::getenv(DEBUGINFOD_URLS_ENV_VAR)) old_ = old;
    setenv(DEBUGINFOD_URLS_ENV_VAR, urls.c_str(), 1);
  }
  ~ScopedUrls() {
    if (old_) {
      setenv(DEBUGINFOD_URLS_ENV_VAR, old_->c_str(), 1);
    } else {
      unsetenv(DEBUGINFOD_URLS_ENV_VAR);
    }
  }
  ScopedUrls(const ScopedUrls&) = delete;
  ScopedUrls& operator=(const ScopedUrls&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace

// libdebuginfod is loaded when the first query is made, as libdwfl loads it: it brings libcurl and
// TLS with it (some 30 libraries, 20 ms of start-up for every heaprec command), which only a
// command that asks a server needs. Its header gives the functions' types.
struct DebuginfodClient::Handle {
  void* library = nullptr;
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_debuginfo) find_debuginfo = nullptr;
  decltype(&debuginfod_find_executable) find_executable = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  debuginfod_client* client = nullptr;
  std::string error;  // why there is no client

  Handle() {
    library = dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (library == nullptr) {
      error = DEBUGINFOD_SONAME " cannot be loaded (Debian package libdebuginfod1)";
      return;
    }
    begin = reinterpret_cast<decltype(begin)>(dlsym(library, "debuginfod_begin"));
    find_debuginfo =
        reinterpret_cast<decltype(find_debuginfo)>(dlsym(library, "debuginfod_find_debuginfo"));
    find_executable =
        reinterpret_cast<decltype(find_executable)>(dlsym(library, "debuginfod_find_executable"));
    end = reinterpret_cast<decltype(end)>(dlsym(library, "debuginfod_end"));
    if (begin && find_debuginfo && find_executable && end) client = begin();
    if (client == nullptr) error = "cannot start the debuginfod client";
  }
  // The library stays loaded: libcurl and the TLS libraries it pulled in keep exit handlers.
  ~Handle() {
    if (client != nullptr) end(client);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

DebuginfodClient::DebuginfodClient(std::string urls) : urls_(std::move(urls)) {
  // Nothing but blanks is no server.
  if (urls_.find_first_not_of(" \t\n") == std::string::npos) urls_.clear();
}

DebuginfodClient::~DebuginfodClient() = default;

DebuginfodClient::Result DebuginfodClient::Find(Artifact artifact, const std::string& build_id) {
  if (!enabled() || build_id.empty()) return {"", "not asked"};
  if (!handle_) handle_ = std::make_unique<Handle>();
  if (handle_->client == nullptr) return {"", handle_->error};
  ScopedUrls scoped(urls_);
  const auto* id = reinterpret_cast<const unsigned char*>(build_id.c_str());
  char* path = nullptr;
  // A build_id_len of 0: the id is given as a hex string.
  int fd = artifact == Artifact::kDebugInfo
               ? handle_->find_debuginfo(handle_->client, id, 0, &path)
               : handle_->find_executable(handle_->client, id, 0, &path);
  if (fd < 0) {
    free(path);
    return {"", fd == -ENOENT ? "not found" : std::strerror(-fd)};
  }
  close(fd);
  Result result{path != nullptr ? path : "", ""};
  free(path);
  if (result.path.empty()) result.error = "no file name";
  return result;
}

}  // namespace heaprec::symbolize
