#include "render/attach_note.h"

#include <cmath>
#include <cstdint>
#include <ctime>

#include "render/format.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

std::string Bytes(int64_t value) { return FormatValue(value, schema::kBytesUnit); }

// "2-4 KiB" for size class K (schema kHeldBySizeField): blocks of (2^(K-1), 2^K] bytes.
std::string SizeClassName(int k) {
  if (k <= 0) return "1 B";
  auto name = [](std::uint64_t bytes) {
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (bytes >= 1024 && unit < 4) bytes /= 1024, ++unit;
    return std::to_string(bytes) + " " + kUnits[unit];
  };
  std::string low = name(std::uint64_t{1} << (k - 1)), high = name(std::uint64_t{1} << k);
  std::size_t space = low.find(' ');
  if (low.substr(space) == high.substr(high.find(' '))) low = low.substr(0, space);  // "2-4 KiB"
  return low + "-" + high;
}

}  // namespace

std::string AttachTime(const analysis::AttachFacts& attach) {
  const std::time_t at = static_cast<std::time_t>(attach.attached_at_s);
  std::tm utc;
  char when[32];
  if (attach.attached_at_s < 0 || gmtime_r(&at, &utc) == nullptr ||
      std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &utc) == 0) {
    return "?";
  }
  return when;
}

std::string HeldBySize(const analysis::AttachFacts& attach, std::size_t classes) {
  if (attach.held_walked <= 0) return "";
  std::string text;
  for (std::size_t i = 0; i < attach.held_by_size.size() && i < classes; ++i) {
    const analysis::HeldSizeClass& c = attach.held_by_size[i];
    const double share = 100.0 * static_cast<double>(c.bytes) / attach.held_walked;
    text += (text.empty() ? "" : ", ") + Bytes(c.bytes) + " in " + SizeClassName(c.size_class) +
            " blocks (" + std::to_string(std::lround(share)) + "%, " + std::to_string(c.blocks) +
            (c.blocks == 1 ? " block)" : " blocks)");
  }
  return text;
}

std::string AttachedSummary(const analysis::AttachFacts& attach) {
  std::string text = AttachTime(attach) + ": only allocations since ";
  if (!attach.injected) {
    return text + "the attach" + (attach.attaches > 1 ? " (the latest)" : "") +
           " are counted below";
  }
  if (attach.held_at_attach < 0) {
    return text +
           "are counted below; what the heap held then is not known (its malloc is not "
           "glibc's)";
  }
  text += "are counted below; the heap held " + Bytes(attach.held_at_attach) + " then";
  const std::string held = HeldBySize(attach, 3);
  return held.empty() ? text : text + ": " + held;
}

void PrintAttachNote(const analysis::AttachFacts& attach, std::ostream& out) {
  out << "Attached: " << AttachTime(attach);
  if (!attach.injected) {
    // Started dormant: heaprec was there all along, but sampled only while attached.
    out << (attach.attaches > 1 ? " (the latest of " + std::to_string(attach.attaches) + ")" : "")
        << "; allocations before the attach" << (attach.attaches > 1 ? " and while detached" : "")
        << " are not in this profile\n";
    return;
  }
  if (attach.held_at_attach < 0) {
    out << "; what the heap held then (allocated before, not in this profile) is not known: the "
           "program's malloc is not glibc's\n";
    return;
  }
  out << ", when the heap held " << Bytes(attach.held_at_attach)
      << " (allocated before, not in this profile); of the heap's "
      << Bytes(std::max<int64_t>(0, attach.heap_in_use)) << " now, "
      << Bytes(std::max<int64_t>(0, attach.unattributed))
      << " is not accounted for by samples since\n";
  const std::string held = HeldBySize(attach, attach.held_by_size.size());
  if (!held.empty()) {
    out << "Before the attach, by block size (glibc's heap as read then, "
        << Bytes(attach.held_walked) << " in use): " << held << "\n";
  }
}

}  // namespace heaprec::render
