// In-memory model of a pprof profile (github.com/google/pprof/proto/profile.proto). Every string
// is resolved (no string-table indexes) so that tools can inspect and edit profiles freely; the
// reader and writer translate to and from the wire format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heaprec::profile {

// Every member has a default initializer, so designated initializers may omit any of them
// without -Wmissing-field-initializers noise.

struct ValueType {
  std::string type{};  // e.g. "inuse_space"
  std::string unit{};  // e.g. "bytes"
  bool operator==(const ValueType&) const = default;
};

struct Label {
  std::string key{};
  std::string str{};  // empty for numeric labels
  int64_t num = 0;
  std::string num_unit{};
  bool operator==(const Label&) const = default;
};

struct Sample {
  std::vector<uint64_t> location_ids{};  // leaf first
  std::vector<int64_t> values{};         // one per Profile::sample_types entry
  std::vector<Label> labels{};
  bool operator==(const Sample&) const = default;
};

struct Mapping {
  uint64_t id = 0;  // nonzero and unique
  uint64_t memory_start = 0;
  uint64_t memory_limit = 0;
  uint64_t file_offset = 0;
  std::string filename{};
  std::string build_id{};
  bool has_functions = false;
  bool has_filenames = false;
  bool has_line_numbers = false;
  bool has_inline_frames = false;
  bool operator==(const Mapping&) const = default;
};

struct Line {
  uint64_t function_id = 0;
  int64_t line = 0;
  bool operator==(const Line&) const = default;
};

struct Location {
  uint64_t id = 0;          // nonzero and unique
  uint64_t mapping_id = 0;  // 0 when the address is in no known mapping
  uint64_t address = 0;
  // Innermost (inlined) frame first; the last entry is the function the code physically belongs to.
  std::vector<Line> lines{};
  bool is_folded = false;
  bool operator==(const Location&) const = default;
};

struct Function {
  uint64_t id = 0;            // nonzero and unique
  std::string name{};         // demangled, human-readable
  std::string system_name{};  // as the linker sees it (mangled)
  std::string filename{};
  int64_t start_line = 0;
  bool operator==(const Function&) const = default;
};

struct Profile {
  std::vector<ValueType> sample_types{};
  std::vector<Sample> samples{};
  std::vector<Mapping> mappings{};
  std::vector<Location> locations{};
  std::vector<Function> functions{};
  std::string drop_frames{};
  std::string keep_frames{};
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  ValueType period_type{};
  int64_t period = 0;
  std::vector<std::string> comments{};
  std::string default_sample_type{};
  bool operator==(const Profile&) const = default;
};

}  // namespace heaprec::profile
