#include "preload/unwind/frame_rule.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>

namespace heaprec::preload {
namespace {

// DWARF register numbers on x86-64 (System V psABI, figure 3.36).
constexpr std::uint64_t kRegRbp = 6, kRegRsp = 7, kRegReturnAddress = 16;

// Pointer encodings (DW_EH_PE_*), as used by .eh_frame_hdr and CIE augmentations.
constexpr std::uint8_t kEncOmit = 0xff;
constexpr std::uint8_t kEncFormatMask = 0x0f, kEncApplicationMask = 0x70, kEncIndirect = 0x80;
constexpr std::uint8_t kEncAbsPtr = 0x00, kEncUleb128 = 0x01, kEncUdata2 = 0x02, kEncUdata4 = 0x03,
                       kEncUdata8 = 0x04, kEncSleb128 = 0x09, kEncSdata2 = 0x0a, kEncSdata4 = 0x0b,
                       kEncSdata8 = 0x0c;
constexpr std::uint8_t kEncPcRel = 0x10, kEncDataRel = 0x30;
// The only search-table encoding linkers write: 32-bit entries relative to .eh_frame_hdr.
constexpr std::uint8_t kEncTable = kEncDataRel | kEncSdata4;

// A bounds-checked reader over one CIE or FDE. Unwind tables are trusted no further than their own
// length fields: a malformed one makes reads fail, never run past its end.
class Reader {
 public:
  Reader(const std::uint8_t* begin, const std::uint8_t* end) : p_(begin), end_(end) {}

  bool ok() const { return ok_; }
  bool at_end() const { return p_ >= end_; }
  const std::uint8_t* position() const { return p_; }
  const std::uint8_t* end() const { return end_; }

  template <typename T>
  T Fixed() {
    T value{};
    if (static_cast<std::size_t>(end_ - p_) < sizeof(T)) return Fail<T>();
    std::memcpy(&value, p_, sizeof(T));
    p_ += sizeof(T);
    return value;
  }
  std::uint64_t Uleb() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return Fail<std::uint64_t>();
      std::uint8_t byte = *p_++;
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Fail<std::uint64_t>();
  }
  std::int64_t Sleb() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return Fail<std::int64_t>();
      std::uint8_t byte = *p_++;
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        if (shift + 7 < 64 && (byte & 0x40) != 0) value |= ~std::uint64_t{0} << (shift + 7);
        return static_cast<std::int64_t>(value);
      }
    }
    return Fail<std::int64_t>();
  }
  const char* CString() {
    const void* nul = std::memchr(p_, 0, static_cast<std::size_t>(end_ - p_));
    if (nul == nullptr) return Fail<const char*>();
    const char* text = reinterpret_cast<const char*>(p_);
    p_ = static_cast<const std::uint8_t*>(nul) + 1;
    return text;
  }
  void Skip(std::uint64_t bytes) {
    if (bytes > static_cast<std::uint64_t>(end_ - p_)) {
      Fail<int>();
      return;
    }
    p_ += bytes;
  }
  // An encoded pointer. `data_base` is what DW_EH_PE_datarel is relative to (0: not allowed).
  // Indirect pointers are not followed (only the personality routine uses them, and it is skipped).
  std::uintptr_t Encoded(std::uint8_t encoding, std::uintptr_t data_base) {
    auto field = reinterpret_cast<std::uintptr_t>(p_);
    std::uint64_t value;
    switch (encoding & kEncFormatMask) {
      case kEncAbsPtr:
        value = Fixed<std::uint64_t>();
        break;
      case kEncUleb128:
        value = Uleb();
        break;
      case kEncUdata2:
        value = Fixed<std::uint16_t>();
        break;
      case kEncUdata4:
        value = Fixed<std::uint32_t>();
        break;
      case kEncUdata8:
        value = Fixed<std::uint64_t>();
        break;
      case kEncSleb128:
        value = static_cast<std::uint64_t>(Sleb());
        break;
      case kEncSdata2:
        value = static_cast<std::uint64_t>(Fixed<std::int16_t>());
        break;
      case kEncSdata4:
        value = static_cast<std::uint64_t>(Fixed<std::int32_t>());
        break;
      case kEncSdata8:
        value = Fixed<std::uint64_t>();
        break;
      default:
        return Fail<std::uintptr_t>();
    }
    switch (encoding & kEncApplicationMask) {
      case 0:
        break;
      case kEncPcRel:
        value += field;
        break;
      case kEncDataRel:
        if (data_base == 0) return Fail<std::uintptr_t>();
        value += data_base;
        break;
      default:
        return Fail<std::uintptr_t>();  // textrel, funcrel, aligned: not used on x86-64
    }
    return static_cast<std::uintptr_t>(value);
  }

 private:
  template <typename T>
  T Fail() {
    ok_ = false;
    p_ = end_;
    return T{};
  }

  const std::uint8_t* p_;
  const std::uint8_t* end_;
  bool ok_ = true;
};

// A record (CIE or FDE) of .eh_frame: its contents after the length field. False for the 64-bit
// format, which no x86-64 toolchain writes for code of ordinary size.
bool RecordAt(const std::uint8_t* record, Reader* contents) {
  std::uint32_t length;
  std::memcpy(&length, record, sizeof(length));
  if (length == 0 || length == 0xffffffffu) return false;
  *contents = Reader(record + 4, record + 4 + length);
  return true;
}

// The row of the CFI table being computed, reduced to the registers the walk follows.
struct Row {
  enum class Rule : std::uint8_t { kSameValue, kUndefined, kOffset, kOther };
  std::uint64_t cfa_register = kRegRsp;
  std::int64_t cfa_offset = 0;
  bool cfa_is_expression = false;
  Rule rbp = Rule::kSameValue;
  std::int64_t rbp_offset = 0;
  Rule return_address = Rule::kUndefined;
  std::int64_t return_address_offset = 0;
};

struct Cie {
  std::uint64_t code_alignment = 1;
  std::int64_t data_alignment = 1;
  std::uint8_t fde_encoding = kEncAbsPtr;
  bool has_augmentation_data = false;  // 'z'
  bool signal_frame = false;           // 'S'
  Reader instructions{nullptr, nullptr};
};

bool ParseCie(const std::uint8_t* record, Cie* cie) {
  Reader r(nullptr, nullptr);
  if (!RecordAt(record, &r) || r.Fixed<std::uint32_t>() != 0) return false;  // CIE id is 0
  std::uint8_t version = r.Fixed<std::uint8_t>();
  if (version != 1 && version != 3) return false;
  const char* augmentation = r.CString();
  if (!r.ok()) return false;
  cie->code_alignment = r.Uleb();
  cie->data_alignment = r.Sleb();
  std::uint64_t return_register = version == 1 ? r.Fixed<std::uint8_t>() : r.Uleb();
  if (!r.ok() || return_register != kRegReturnAddress) return false;
  const std::uint8_t* instructions = nullptr;
  for (const char* a = augmentation; *a != '\0'; ++a) {
    if (*a == 'z') {
      if (a != augmentation) return false;
      std::uint64_t length = r.Uleb();
      cie->has_augmentation_data = true;
      if (!r.ok() || length > static_cast<std::uint64_t>(r.end() - r.position())) return false;
      instructions = r.position() + length;
    } else if (*a == 'R') {
      cie->fde_encoding = r.Fixed<std::uint8_t>();
    } else if (*a == 'L') {
      r.Fixed<std::uint8_t>();  // the LSDA's encoding; the FDE's augmentation data is skipped
    } else if (*a == 'P') {
      std::uint8_t encoding = r.Fixed<std::uint8_t>();
      r.Encoded(static_cast<std::uint8_t>(encoding & ~kEncIndirect), 0);
    } else if (*a == 'S') {
      cie->signal_frame = true;
    } else if (instructions != nullptr) {
      break;  // an augmentation this reader does not know: with 'z' its data can be skipped
    } else {
      return false;
    }
    if (!r.ok()) return false;
  }
  if (instructions == nullptr) instructions = r.position();
  cie->instructions = Reader(instructions, r.end());
  return r.ok();
}

// Runs call-frame instructions from `loc`, stopping before the first row that starts beyond
// `target` (when `target` is 0 all instructions run, as for a CIE's initial ones). `initial` is the
// row the CIE's instructions produced, for DW_CFA_restore. False on anything malformed or that
// this unwinder does not model for the registers it follows.
bool Execute(Reader r, const Cie& cie, std::uintptr_t loc, std::uintptr_t target,
             const Row& initial, Row* row) {
  constexpr int kMaxRemembered = 8;
  Row remembered[kMaxRemembered];
  int depth = 0;
  auto set_offset = [&](std::uint64_t reg, std::int64_t offset) {
    if (reg == kRegRbp) {
      row->rbp = Row::Rule::kOffset;
      row->rbp_offset = offset;
    } else if (reg == kRegReturnAddress) {
      row->return_address = Row::Rule::kOffset;
      row->return_address_offset = offset;
    }
  };
  auto set_rule = [&](std::uint64_t reg, Row::Rule rule) {
    if (reg == kRegRbp) row->rbp = rule;
    if (reg == kRegReturnAddress) row->return_address = rule;
  };
  auto restore = [&](std::uint64_t reg) {
    if (reg == kRegRbp) {
      row->rbp = initial.rbp;
      row->rbp_offset = initial.rbp_offset;
    } else if (reg == kRegReturnAddress) {
      row->return_address = initial.return_address;
      row->return_address_offset = initial.return_address_offset;
    }
  };
  auto advance = [&](std::uint64_t delta) {
    loc += delta * cie.code_alignment;
    return target == 0 || loc <= target;
  };
  while (!r.at_end()) {
    std::uint8_t op = r.Fixed<std::uint8_t>();
    std::uint8_t low = op & 0x3f;
    switch (op >> 6) {
      case 1:  // DW_CFA_advance_loc
        if (!advance(low)) return true;
        continue;
      case 2:  // DW_CFA_offset
        set_offset(low, static_cast<std::int64_t>(r.Uleb()) * cie.data_alignment);
        continue;
      case 3:  // DW_CFA_restore
        restore(low);
        continue;
      default:
        break;
    }
    switch (op) {
      case 0x00:
        break;      // DW_CFA_nop
      case 0x01: {  // DW_CFA_set_loc
        std::uintptr_t next = r.Encoded(cie.fde_encoding, 0);
        if (target != 0 && next > target) return r.ok();
        loc = next;
        break;
      }
      case 0x02:  // DW_CFA_advance_loc1
        if (!advance(r.Fixed<std::uint8_t>())) return r.ok();
        break;
      case 0x03:  // DW_CFA_advance_loc2
        if (!advance(r.Fixed<std::uint16_t>())) return r.ok();
        break;
      case 0x04:  // DW_CFA_advance_loc4
        if (!advance(r.Fixed<std::uint32_t>())) return r.ok();
        break;
      case 0x05: {  // DW_CFA_offset_extended
        std::uint64_t reg = r.Uleb();
        set_offset(reg, static_cast<std::int64_t>(r.Uleb()) * cie.data_alignment);
        break;
      }
      case 0x06:  // DW_CFA_restore_extended
        restore(r.Uleb());
        break;
      case 0x07:  // DW_CFA_undefined
        set_rule(r.Uleb(), Row::Rule::kUndefined);
        break;
      case 0x08:  // DW_CFA_same_value
        set_rule(r.Uleb(), Row::Rule::kSameValue);
        break;
      case 0x09: {  // DW_CFA_register
        std::uint64_t reg = r.Uleb();
        r.Uleb();
        set_rule(reg, Row::Rule::kOther);
        break;
      }
      case 0x0a:  // DW_CFA_remember_state
        if (depth == kMaxRemembered) return false;
        remembered[depth++] = *row;
        break;
      case 0x0b:  // DW_CFA_restore_state
        if (depth == 0) return false;
        *row = remembered[--depth];
        break;
      case 0x0c:  // DW_CFA_def_cfa
        row->cfa_register = r.Uleb();
        row->cfa_offset = static_cast<std::int64_t>(r.Uleb());
        row->cfa_is_expression = false;
        break;
      case 0x0d:  // DW_CFA_def_cfa_register
        row->cfa_register = r.Uleb();
        row->cfa_is_expression = false;
        break;
      case 0x0e:  // DW_CFA_def_cfa_offset
        row->cfa_offset = static_cast<std::int64_t>(r.Uleb());
        break;
      case 0x0f:  // DW_CFA_def_cfa_expression
        r.Skip(r.Uleb());
        row->cfa_is_expression = true;
        break;
      case 0x10:    // DW_CFA_expression
      case 0x16: {  // DW_CFA_val_expression
        std::uint64_t reg = r.Uleb();
        r.Skip(r.Uleb());
        set_rule(reg, Row::Rule::kOther);
        break;
      }
      case 0x11: {  // DW_CFA_offset_extended_sf
        std::uint64_t reg = r.Uleb();
        set_offset(reg, r.Sleb() * cie.data_alignment);
        break;
      }
      case 0x12:  // DW_CFA_def_cfa_sf
        row->cfa_register = r.Uleb();
        row->cfa_offset = r.Sleb() * cie.data_alignment;
        row->cfa_is_expression = false;
        break;
      case 0x13:  // DW_CFA_def_cfa_offset_sf
        row->cfa_offset = r.Sleb() * cie.data_alignment;
        break;
      case 0x14:    // DW_CFA_val_offset
      case 0x15: {  // DW_CFA_val_offset_sf
        std::uint64_t reg = r.Uleb();
        if (op == 0x14) {
          r.Uleb();
        } else {
          r.Sleb();
        }
        set_rule(reg, Row::Rule::kOther);
        break;
      }
      case 0x2e:  // DW_CFA_GNU_args_size
        r.Uleb();
        break;
      case 0x2f: {  // DW_CFA_GNU_negative_offset_extended
        std::uint64_t reg = r.Uleb();
        set_offset(reg, -static_cast<std::int64_t>(r.Uleb()) * cie.data_alignment);
        break;
      }
      default:
        return false;
    }
    if (!r.ok()) return false;
  }
  return r.ok();
}

// The FDE whose range holds `pc`, from the binary-search table of .eh_frame_hdr. Null when the
// object has no entry for it; *usable is false when the table is in a form this reader does not
// handle (then libgcc, which can also scan .eh_frame linearly, decides).
const std::uint8_t* FindFde(const std::uint8_t* header, std::uintptr_t pc, bool* usable) {
  *usable = false;
  auto base = reinterpret_cast<std::uintptr_t>(header);
  if (header[0] != 1) return nullptr;  // version
  std::uint8_t frame_encoding = header[1], count_encoding = header[2], table_encoding = header[3];
  if (count_encoding == kEncOmit || table_encoding != kEncTable) return nullptr;
  // The header's fields have no length of their own; 64 bytes bound the two encoded values.
  Reader r(header + 4, header + 4 + 64);
  r.Encoded(frame_encoding, base);
  std::uintptr_t count = r.Encoded(count_encoding, base);
  if (!r.ok()) return nullptr;
  *usable = true;
  struct Entry {
    std::int32_t initial_location, fde;
  };
  auto* table = reinterpret_cast<const Entry*>(r.position());
  std::uintptr_t low = 0, high = count;  // the answer is the last entry with location <= pc
  while (low < high) {
    std::uintptr_t mid = low + (high - low) / 2;
    if (base + static_cast<std::intptr_t>(table[mid].initial_location) <= pc) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low == 0) return nullptr;
  return header + table[low - 1].fde;
}

}  // namespace

FrameRule FrameRule::Step(bool cfa_from_rbp, std::int64_t cfa_offset, FramePointer rbp,
                          std::int64_t rbp_offset) {
  if (cfa_offset != static_cast<std::int32_t>(cfa_offset) ||
      rbp_offset != static_cast<std::int16_t>(rbp_offset)) {
    return Fallback();
  }
  return FrameRule(static_cast<std::uint64_t>(Kind::kStep) |
                   static_cast<std::uint64_t>(cfa_from_rbp) << 2 |
                   static_cast<std::uint64_t>(rbp) << 3 |
                   static_cast<std::uint64_t>(static_cast<std::uint16_t>(rbp_offset)) << 16 |
                   static_cast<std::uint64_t>(static_cast<std::uint32_t>(cfa_offset)) << 32);
}

FrameRule ComputeFrameRule(std::uintptr_t pc, bool* in_object) {
  dl_find_object object;
  *in_object = _dl_find_object(reinterpret_cast<void*>(pc), &object) == 0;
  if (!*in_object) return FrameRule::End();
  if (object.dlfo_eh_frame == nullptr) return FrameRule::End();
  bool usable;
  const std::uint8_t* fde =
      FindFde(static_cast<const std::uint8_t*>(object.dlfo_eh_frame), pc, &usable);
  if (!usable) return FrameRule::Fallback();
  if (fde == nullptr) return FrameRule::End();

  Reader r(nullptr, nullptr);
  if (!RecordAt(fde, &r)) return FrameRule::Fallback();
  const std::uint8_t* cie_pointer_field = r.position();
  std::uint32_t cie_offset = r.Fixed<std::uint32_t>();
  Cie cie;
  if (cie_offset == 0 || !ParseCie(cie_pointer_field - cie_offset, &cie) || cie.signal_frame) {
    return FrameRule::Fallback();
  }
  std::uintptr_t pc_begin = r.Encoded(cie.fde_encoding, 0);
  std::uintptr_t pc_range = r.Encoded(cie.fde_encoding & kEncFormatMask, 0);
  if (!r.ok()) return FrameRule::Fallback();
  if (pc < pc_begin || pc - pc_begin >= pc_range) return FrameRule::End();  // in a gap
  if (cie.has_augmentation_data) r.Skip(r.Uleb());
  if (!r.ok()) return FrameRule::Fallback();

  Row initial;
  if (!Execute(cie.instructions, cie, pc_begin, 0, initial, &initial)) return FrameRule::Fallback();
  Row row = initial;
  if (!Execute(r, cie, pc_begin, pc, initial, &row)) return FrameRule::Fallback();

  if (row.return_address == Row::Rule::kUndefined) return FrameRule::End();
  if (row.return_address != Row::Rule::kOffset || row.return_address_offset != -8 ||
      row.cfa_is_expression || (row.cfa_register != kRegRsp && row.cfa_register != kRegRbp)) {
    return FrameRule::Fallback();
  }
  FrameRule::FramePointer rbp;
  switch (row.rbp) {
    case Row::Rule::kSameValue:
      rbp = FrameRule::FramePointer::kUnchanged;
      break;
    case Row::Rule::kOffset:
      rbp = FrameRule::FramePointer::kSaved;
      break;
    case Row::Rule::kUndefined:
      rbp = FrameRule::FramePointer::kUnknown;
      break;
    default:
      return FrameRule::Fallback();
  }
  return FrameRule::Step(row.cfa_register == kRegRbp, row.cfa_offset, rbp, row.rbp_offset);
}

}  // namespace heaprec::preload
