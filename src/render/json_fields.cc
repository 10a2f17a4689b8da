#include "render/json_fields.h"

#include <cmath>

#include "profile/sampling_error.h"

namespace heaprec::render {

void WriteFrameFields(JsonWriter& j, const analysis::FrameId& frame) {
  j.Key("function").String(frame.function);
  j.Key("file").String(frame.file);
  j.Key("line").Int(frame.line);
  j.Key("address");
  frame.symbolized() ? j.Null() : j.String(frame.address);
  j.Key("mapping");
  frame.symbolized() ? j.Null() : j.String(frame.mapping);
}

void WriteIntervalFields(JsonWriter& j, const std::string& name, bool sampled, int64_t value,
                         double variance) {
  if (!sampled || !std::isfinite(variance)) {
    j.Key(name + "_low").Null();
    j.Key(name + "_high").Null();
    return;
  }
  profile::Interval ci = profile::Confidence95(static_cast<double>(value), variance);
  j.Key(name + "_low").Int(static_cast<int64_t>(std::floor(ci.low)));
  j.Key(name + "_high").Int(static_cast<int64_t>(std::ceil(ci.high)));
}

}  // namespace heaprec::render
