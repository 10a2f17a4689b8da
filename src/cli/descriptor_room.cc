#include "cli/descriptor_room.h"

#include <dirent.h>

#include <cstdlib>

#include "cli/remote_process.h"

namespace heaprec::cli {
namespace {

// The descriptors of `process` numbered below `limit`, or -1 when they cannot be listed.
long DescriptorsBelow(const RemoteProcess& process, rlim_t limit) {
  DIR* directory = opendir(process.ProcPath("fd").c_str());
  if (directory == nullptr) return -1;
  long count = 0;
  while (dirent* entry = readdir(directory)) {
    char* end = nullptr;
    unsigned long number = std::strtoul(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && number < limit) ++count;
  }
  closedir(directory);
  return count;
}

}  // namespace

bool DescriptorRoom::Make(int needed, std::string* error) {
  if (prlimit(pid_, RLIMIT_NOFILE, nullptr, &before_) != 0 || before_.rlim_cur == RLIM_INFINITY) {
    return true;  // unreadable or unlimited: the injection says what fails, if anything does
  }
  long in_use = DescriptorsBelow(RemoteProcess(pid_), before_.rlim_cur);
  if (in_use < 0) return true;
  rlim_t free = before_.rlim_cur - static_cast<rlim_t>(in_use);
  if (free >= static_cast<rlim_t>(needed)) return true;
  rlim_t wanted = before_.rlim_cur + (static_cast<rlim_t>(needed) - free);
  std::string id = std::to_string(pid_);
  if (before_.rlim_max != RLIM_INFINITY && wanted > before_.rlim_max) {
    *error = "process " + id + " has every descriptor its limit allows in use (" +
             std::to_string(in_use) + " open, RLIMIT_NOFILE " + std::to_string(before_.rlim_cur) +
             " soft and " + std::to_string(before_.rlim_max) + " hard): heaprec needs " +
             std::to_string(needed) + " free; `prlimit --pid " + id +
             " --nofile=" + std::to_string(wanted) +
             "` makes room (raising a hard limit takes CAP_SYS_RESOURCE)";
    return false;
  }
  rlimit raised = {wanted, before_.rlim_max};
  if (prlimit(pid_, RLIMIT_NOFILE, &raised, nullptr) == 0) raised_to_ = wanted;
  return true;
}

void DescriptorRoom::Restore() {
  rlimit now;
  if (raised_to_ == 0 || restored_) return;
  restored_ = true;
  if (prlimit(pid_, RLIMIT_NOFILE, nullptr, &now) != 0 || now.rlim_cur != raised_to_) {
    return;
  }
  rlimit restored = {before_.rlim_cur, now.rlim_max};
  prlimit(pid_, RLIMIT_NOFILE, &restored, nullptr);
}

std::string DescriptorRoom::Note() const {
  if (raised_to_ == 0) return "";
  return " (every descriptor below its limit was in use: its soft RLIMIT_NOFILE was " +
         std::to_string(raised_to_) + " instead of " + std::to_string(before_.rlim_cur) +
         " while its thread was held)";
}

}  // namespace heaprec::cli
