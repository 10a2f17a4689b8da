// Field numbers of pprof's profile.proto (github.com/google/pprof/proto/profile.proto), so the wire
// format is written with named constants rather than magic numbers. Shared by every writer and
// reader.
#pragma once

#include <cstdint>

namespace heaprec::pprof {

enum ProfileField : std::uint32_t {
  kProfileSampleType = 1,
  kProfileSample = 2,
  kProfileMapping = 3,
  kProfileLocation = 4,
  kProfileFunction = 5,
  kProfileStringTable = 6,
  kProfileDropFrames = 7,
  kProfileKeepFrames = 8,
  kProfileTimeNanos = 9,
  kProfileDurationNanos = 10,
  kProfilePeriodType = 11,
  kProfilePeriod = 12,
  kProfileComment = 13,
  kProfileDefaultSampleType = 14,
};

enum ValueTypeField : std::uint32_t { kValueTypeType = 1, kValueTypeUnit = 2 };

enum SampleField : std::uint32_t { kSampleLocationId = 1, kSampleValue = 2, kSampleLabel = 3 };

enum LabelField : std::uint32_t { kLabelKey = 1, kLabelStr = 2, kLabelNum = 3, kLabelNumUnit = 4 };

enum MappingField : std::uint32_t {
  kMappingId = 1,
  kMappingMemoryStart = 2,
  kMappingMemoryLimit = 3,
  kMappingFileOffset = 4,
  kMappingFilename = 5,
  kMappingBuildId = 6,
  kMappingHasFunctions = 7,
  kMappingHasFilenames = 8,
  kMappingHasLineNumbers = 9,
  kMappingHasInlineFrames = 10,
};

enum LocationField : std::uint32_t {
  kLocationId = 1,
  kLocationMappingId = 2,
  kLocationAddress = 3,
  kLocationLine = 4,
  kLocationIsFolded = 5,
};

enum LineField : std::uint32_t {
  kLineFunctionId = 1,
  kLineLine = 2,
  // Newer addition to profile.proto; not part of heaprec's model, so the reader skips it on
  // purpose and the writers never emit it.
  kLineColumn = 3,
};

enum FunctionField : std::uint32_t {
  kFunctionId = 1,
  kFunctionName = 2,
  kFunctionSystemName = 3,
  kFunctionFilename = 4,
  kFunctionStartLine = 5,
};

}  // namespace heaprec::pprof
