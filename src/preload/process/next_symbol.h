// The next definition of a symbol heaprec interposes (the real sigaction, setuid, execve, dlclose),
// looked up once with dlsym(RTLD_NEXT) and kept. Declared at namespace scope, it is constant-
// initialized: usable before any constructor ran. dlsym of a name that exists does not allocate; a
// race only makes two threads look it up.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace heaprec::preload {

template <typename Fn>
class NextSymbol {
 public:
  explicit constexpr NextSymbol(const char* name) : name_(name) {}
  NextSymbol(const NextSymbol&) = delete;
  NextSymbol& operator=(const NextSymbol&) = delete;

  // Null when nothing after heaprec defines it.
  Fn get() {
    Fn fn = fn_.load(std::memory_order_acquire);
    if (fn == nullptr) {
      fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name_));
      fn_.store(fn, std::memory_order_release);
    }
    return fn;
  }

 private:
  const char* name_;
  std::atomic<Fn> fn_{nullptr};
};

}  // namespace heaprec::preload
