// Room for the descriptors `heaprec attach`, `dump` and `detach` make inside a process that has
// every descriptor number below its soft RLIMIT_NOFILE in use: a descriptor leak, often the very
// incident heaprec is attached for. The injection needs a few (the library's memory file and
// dlopen's, the socket pair the output directory is handed over on, the directory itself); with
// none free it could not load heaprec, nor hand over a directory for a dump. So, for the moments
// the thread is held, the soft limit is raised (never above the hard limit) and then put back. The
// library's own files, made later, get their number the same way (core/own_descriptors.h, MakeOwn).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <string>

namespace heaprec::cli {

class DescriptorRoom {
 public:
  // The numbers an injection may hold open at once: the memory file and dlopen's, or the socket
  // pair and the directory received on it, and one to spare.
  static constexpr int kForInjection = 4;
  // What a detach needs: the number its profile takes (the library makes room for it itself when
  // the hard limit allows, MakeOwn).
  static constexpr int kForProfile = 1;

  explicit DescriptorRoom(pid_t pid) : pid_(pid) {}
  ~DescriptorRoom() { Restore(); }
  DescriptorRoom(const DescriptorRoom&) = delete;
  DescriptorRoom& operator=(const DescriptorRoom&) = delete;

  // Makes sure `needed` numbers below the soft limit are free, raising it if they are not. False,
  // with an error an operator can act on, when the hard limit leaves no room: nothing is done then.
  bool Make(int needed, std::string* error);
  // Puts the soft limit back, unless the process has set another since: as soon as the thread is
  // let go, so that the program's own calls meet the limit it set.
  void Restore();
  // What was done, for the command's message: "" when the process had room already.
  std::string Note() const;

 private:
  pid_t pid_;
  rlimit before_ = {};
  rlim_t raised_to_ = 0;  // 0: not raised
  bool restored_ = false;
};

}  // namespace heaprec::cli
