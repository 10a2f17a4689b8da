// The "top functions" report of a heap profile, shared by `heaprec report` and by `heaprec run`
// (which prints the top 10 when the program exits). Mirrors `pprof -top`: flat counts a sample
// for its leaf function only, cum for every function on its stack (once per sample).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace heaprec::cli {

enum class ReportFormat { kText, kJson };

struct ReportOptions {
  std::string source;        // the profile's file name, shown in the header; "" to omit
  std::string sample_index;  // "" = the profile's default_sample_type, else its last type
  size_t top = 20;           // rows to print; 0 = all
  ReportFormat format = ReportFormat::kText;
};

// The requested sample index is not in the profile. what() lists the ones it has.
class UnknownSampleIndexError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct ReportRow {
  std::string function;  // demangled name, or the hex address for an unsymbolized location
  std::string file;      // function's source file ("" if unknown)
  int64_t line = 0;      // function's start line (0 if unknown)
  std::string address;   // hex address, only for an unsymbolized location
  std::string mapping;   // base name of its mapping's file, only for an unsymbolized location
  int64_t flat = 0;
  int64_t cum = 0;
};

struct Report {
  ValueType sample_type;
  int64_t total = 0;
  size_t samples = 0;
  std::vector<ReportRow> rows;  // all rows, by decreasing flat, then cum, then name
};

// Throws UnknownSampleIndexError.
Report ComputeReport(const Profile& profile, const std::string& sample_index);

// Formats a value in `unit`: bytes as B/KiB/MiB/GiB (one decimal above B), others as integers.
std::string FormatValue(int64_t value, const std::string& unit);

// Prints the header and the top rows. Throws UnknownSampleIndexError before printing anything.
void PrintReport(const Profile& profile, const ReportOptions& options, std::ostream& out);

}  // namespace heaprec::cli
