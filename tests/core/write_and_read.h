// The encoder tests' round trip: a recorder's heap snapshotted and sorted as a dump does it,
// encoded by the in-process encoder and decoded by the CLI's reader, as a profile reaches the
// commands.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "core/heap_profile_encoder.h"
#include "core/heap_snapshot.h"
#include "profile/pprof_reader.h"
#include "string_sink.h"

namespace heaprec {

// Object key -> tag: the tags a front end sets on a snapshot's objects before it is sorted.
using TagsByKey = std::map<std::uint64_t, std::uint64_t>;

// Takes a snapshot of `recorder` into `snapshot`, sets each object's tag from `tag_of` and sorts
// it, ready to encode. Fails the test (fatally: wrap in ASSERT_NO_FATAL_FAILURE) if it cannot.
inline void TakeSorted(HeapRecorder& recorder, HeapSnapshot* snapshot,
                       const TagsByKey& tag_of = {}) {
  // Tags are set by key, so a test that sets some copies each object, as the Ruby front end does;
  // without, the copy is by site, as the preload library takes it.
  ASSERT_TRUE(snapshot->Take(
      recorder, tag_of.empty() ? SnapshotGrouping::kBySite : SnapshotGrouping::kEachObject));
  HeapSnapshot::Object* objects = snapshot->mutable_objects();
  for (std::size_t i = 0; i < snapshot->object_count(); ++i) {
    auto it = tag_of.find(objects[i].key);
    if (it != tag_of.end()) objects[i].tag = it->second;
  }
  snapshot->SortByStackAndSize();
}

// TakeSorted, then the encoding with `metadata`: the profile's bytes, for the tests that read the
// wire itself. "" after a test failure if a step failed.
inline std::string WriteProfileBytes(HeapRecorder& recorder, const ProfileMetadata& metadata,
                                     MemoryResource& memory, const TagsByKey& tag_of = {}) {
  HeapSnapshot snapshot;
  TakeSorted(recorder, &snapshot, tag_of);
  if (::testing::Test::HasFatalFailure()) return "";
  StringSink sink;
  if (!EncodeHeapProfile(snapshot, metadata, memory, sink)) {
    ADD_FAILURE() << "EncodeHeapProfile failed";
    return "";
  }
  return sink.bytes;
}

// WriteProfileBytes, decoded.
inline profile::Profile WriteAndRead(HeapRecorder& recorder, const ProfileMetadata& metadata,
                                     MemoryResource& memory, const TagsByKey& tag_of = {}) {
  return profile::ReadProfile(WriteProfileBytes(recorder, metadata, memory, tag_of));
}

}  // namespace heaprec
