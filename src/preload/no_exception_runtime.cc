// Stand-ins for the two C++ exception-runtime symbols the core's pprof writer refers to.
//
// The writer is compiled with -fexceptions only because protozero's headers contain throw
// statements (in the varint decoder, which writing never uses). Its functions therefore get cleanup
// landing pads that name __gxx_personality_v0 and _Unwind_Resume. Resolving those from libstdc++
// and libgcc_s would load both into every profiled C program. No exception is ever thrown into or
// through the writer (it calls nothing that throws, and no program code), so these are never
// called; the version script keeps them local, so the program's own exception handling is
// untouched. tests/preload checks the library's imports. (<unwind.h> is not included: its
// declarations would clash with these.)
#include <cstdlib>

extern "C" {

// Returns _URC_CONTINUE_UNWIND (8): "no handler in this frame".
int __gxx_personality_v0(int, int, unsigned long, void*, void*) { return 8; }

void _Unwind_Resume(void*) { abort(); }

}  // extern "C"
