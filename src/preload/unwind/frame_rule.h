// FrameRule: how to step from one x86-64 frame to its caller, read from the DWARF call-frame
// information (.eh_frame) of the object that contains the code.
//
// heaprec's own unwinder needs only three registers: the stack pointer, the frame pointer (rbp) and
// the return address. For nearly every instruction of compiled code, the rules for those reduce to
//   CFA = rsp or rbp + offset,  return address at CFA - 8,  rbp unchanged or saved at CFA + offset
// and that is what a FrameRule holds, packed into one word so that a cache can publish it
// atomically. Anything else (a CFA computed by a DWARF expression, as in signal trampolines and
// PLT stubs; registers saved in other registers; 64-bit .eh_frame) is kFallback: the caller hands
// the whole stack to libgcc's general unwinder instead.
//
// ComputeFrameRule finds the rule with glibc's _dl_find_object (lock-free, no allocation, safe in
// a child of fork()) and the object's .eh_frame_hdr search table; it allocates nothing, takes no
// lock and reads only the loaded object's own unwind tables.
#pragma once

#include <cstdint>

namespace heaprec::preload {

class FrameRule {
 public:
  enum class Kind : std::uint8_t {
    kUnset = 0,     // never stored: a cache's empty word
    kStep = 1,      // the rule below applies
    kEnd = 2,       // outermost frame (return address undefined) or code without unwind tables
    kFallback = 3,  // a rule this unwinder does not follow
  };
  enum class FramePointer : std::uint8_t { kUnchanged = 0, kSaved = 1, kUnknown = 2 };

  static FrameRule End() { return FrameRule(static_cast<std::uint64_t>(Kind::kEnd)); }
  static FrameRule Fallback() { return FrameRule(static_cast<std::uint64_t>(Kind::kFallback)); }
  // A step; kFallback when the offsets do not fit the packed form.
  static FrameRule Step(bool cfa_from_rbp, std::int64_t cfa_offset, FramePointer rbp,
                        std::int64_t rbp_offset);
  static FrameRule FromWord(std::uint64_t word) { return FrameRule(word); }

  std::uint64_t word() const { return word_; }
  Kind kind() const { return static_cast<Kind>(word_ & 3); }
  bool cfa_from_rbp() const { return (word_ >> 2 & 1) != 0; }
  FramePointer rbp() const { return static_cast<FramePointer>(word_ >> 3 & 3); }
  std::int64_t rbp_offset() const { return static_cast<std::int16_t>(word_ >> 16); }
  std::int64_t cfa_offset() const { return static_cast<std::int32_t>(word_ >> 32); }

 private:
  explicit FrameRule(std::uint64_t word) : word_(word) {}
  // bits 0-1 kind, 2 CFA register (0 rsp, 1 rbp), 3-4 rbp rule, 16-31 rbp's offset from the CFA,
  // 32-63 the CFA's offset from its register.
  std::uint64_t word_;
};

// The rule that holds at `pc`: for a return address, pass the address of the call instruction
// (return address minus one), as the caller's frame is described there. *in_object is false when
// no loaded object contains `pc` (JIT code, or a wrong address): that kEnd must not be cached, as
// an object loaded later may take the address.
FrameRule ComputeFrameRule(std::uintptr_t pc, bool* in_object);

}  // namespace heaprec::preload
