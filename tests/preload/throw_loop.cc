// Throws and catches N exceptions, then prints the file of the library whose _Unwind_RaiseException
// the program resolves. Under heaprec it must still be libgcc_s: a preloaded libunwind exporting
// _Unwind_* would take over exception handling and slow throws down ~20x.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  long caught = 0;
  for (int i = 0; i < n; ++i) {
    try {
      throw std::runtime_error(std::string(64, 'x'));
    } catch (const std::exception& e) {
      caught += static_cast<long>(std::string(e.what()).size());
    }
  }
  void* raise = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
  Dl_info info{};
  if (raise == nullptr || dladdr(raise, &info) == 0) return 2;
  std::printf("%ld %s\n", caught, info.dli_fname);
  return 0;
}
