#include "cfi_frames.h"

#include <alloca.h>

#include <cstring>

namespace heaprec::cfi_frames {
namespace {

volatile int g_sink;

__attribute__((noinline)) int Next(Style style, int depth, Leaf leaf, void* context);

__attribute__((noinline)) int Plain(Style style, int depth, Leaf leaf, void* context) {
  int result = Next(style, depth - 1, leaf, context);
  g_sink = g_sink + result;
  return result + 1;
}

__attribute__((noinline)) int WithAlloca(Style style, int depth, Leaf leaf, void* context) {
  auto* buffer = static_cast<char*>(alloca(static_cast<unsigned>(32 + depth * 8)));
  std::memset(buffer, depth, 32);
  g_sink = buffer[depth % 32];
  int result = Next(style, depth - 1, leaf, context);
  return result + buffer[3];
}

template <int kBytes>
__attribute__((noinline)) int WithLargeFrame(Style style, int depth, Leaf leaf, void* context) {
  volatile char buffer[kBytes];
  buffer[0] = static_cast<char>(depth);
  buffer[sizeof(buffer) - 1] = 1;
  int result = Next(style, depth - 1, leaf, context);
  return result + buffer[0] + buffer[sizeof(buffer) - 1];
}

__attribute__((noinline)) int Realigned(Style style, int depth, Leaf leaf, void* context) {
  alignas(128) volatile char buffer[128];
  buffer[0] = static_cast<char>(depth);
  int result = Next(style, depth - 1, leaf, context);
  return result + buffer[0];
}

__attribute__((noinline)) int Next(Style style, int depth, Leaf leaf, void* context) {
  if (depth <= 0) {
    leaf(context);
    return g_sink;
  }
  switch (style) {
    case Style::kPlain:
      return Plain(style, depth, leaf, context);
    case Style::kAlloca:
      return WithAlloca(style, depth, leaf, context);
    case Style::kLargeFrame:
      return WithLargeFrame<300 * 1024>(style, depth, leaf, context);
    case Style::kHugeFrame:
      return WithLargeFrame<1536 * 1024>(style, depth, leaf, context);
    case Style::kRealigned:
      return Realigned(style, depth, leaf, context);
    case Style::kMixed:
      switch (depth % 3) {
        case 0:
          return Plain(style, depth, leaf, context);
        case 1:
          return WithAlloca(style, depth, leaf, context);
        default:
          return WithLargeFrame<300 * 1024>(style, depth, leaf, context);
      }
  }
  return 0;
}

}  // namespace

int Descend(Style style, int depth, Leaf leaf, void* context) {
  return Next(style, depth, leaf, context) + 1;
}

}  // namespace heaprec::cfi_frames
