// Chains of frames of the kinds compilers emit, for the CFI walker's tests. Built with -O2
// -fomit-frame-pointer (see CMakeLists.txt), so most frames have no frame pointer and the walker
// must follow their call-frame information.
#pragma once

namespace heaprec::cfi_frames {

using Leaf = void (*)(void* context);

enum class Style {
  kPlain,       // CFA = rsp + offset, nothing saved in rbp
  kAlloca,      // a variable-size frame: CFA = rbp + 16
  kLargeFrame,  // a 300 KiB frame: the walker's window grows over it page by page
  kHugeFrame,   // a 1.5 MiB frame, beyond the window's growth: its reads are checked apart
  kRealigned,   // an over-aligned local: gcc describes the CFA with a DWARF expression
  kMixed,       // plain, alloca and large frames in turn
};

// Calls leaf(context) at the bottom of `depth` frames of `style`; returns a value that depends on
// every frame, so that none is folded away or turned into a tail call.
int Descend(Style style, int depth, Leaf leaf, void* context);

}  // namespace heaprec::cfi_frames
