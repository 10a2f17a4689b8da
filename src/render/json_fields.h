// Members that several JSON outputs share, written one way: a frame's names and a value's 95%
// interval.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/profile_view.h"
#include "render/json_writer.h"

namespace heaprec::render {

// "function", "file", "line", and "address" and "mapping" (null for a symbolized frame).
void WriteFrameFields(JsonWriter& j, const analysis::FrameId& frame);

// NAME_low and NAME_high: the ends of the value's 95% interval rounded outwards to whole units;
// null when the value is exact (`sampled` false) or its variance unknown.
void WriteIntervalFields(JsonWriter& j, const std::string& name, bool sampled, int64_t value,
                         double variance);

}  // namespace heaprec::render
