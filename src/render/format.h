// How every output spells numbers, intervals, durations and frames: one set of formatters for the
// text, JSON, SVG, HTML and flame-page renderers, so that a value reads the same everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace heaprec::render {

// A value in `unit`: bytes as B/KiB/MiB/GiB/TiB (one decimal above B), others as integers with
// the unit after them ("count" and "" omitted).
std::string FormatValue(int64_t value, const std::string& unit);

// Bytes, rounded to a whole number first.
std::string FormatBytes(double bytes);

// A change: "+1.5 MiB", "-2.0 KiB", "0 B".
std::string FormatChange(int64_t change, const std::string& unit);

// The half-width of a 95% interval, 1.96·sqrt(variance), as "±1.1 MiB" ("±?" when unknown).
std::string FormatMargin(double variance, const std::string& unit);

// part / total as a percentage (0 when the total is 0), and its text, one decimal: "12.5%".
double Percent(int64_t part, int64_t total);
std::string FormatPercent(double percent);

// `value` with `decimals` decimals ("%.*f").
std::string FormatFixed(double value, int decimals);

// A duration in seconds: "850 ms", "12.3 s", "4.1 min", "2.0 h".
std::string FormatSeconds(double seconds);

// How a per-object profile was sampled: "1 in 1000 objects", or "every object (exact)" at
// period 1.
std::string FormatObjectSampling(int64_t period);

// How many of `available` rows a "top N" output shows (top 0 = all).
size_t RowsShown(size_t available, size_t top);

}  // namespace heaprec::render
