// The in-process profile encoder, checked by decoding its output with the CLI's reader: sample
// types and conventions, one sample per (stack, size) with merged alloc/inuse values, deduplicated
// locations pointing at the right mappings, and the gzip sink.
#include "core/heap_profile_encoder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/gzip_file_sink.h"
#include "profile/pprof_reader.h"
#include "schema/sampling_weight.h"
#include "write_and_read.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

class HeapProfileEncoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Site A: two live objects of 100 bytes (weights 1.5 and 2.5) and one freed; site B: one live
    // object of 4000 bytes, weight 1; site A also one live object of 7 bytes.
    std::uint64_t a[] = {0x401010, 0x402020, 0x7f0000001000}, b[] = {0x401030, 0x402020};
    recorder_.Record(0x10, a, 3, 100, 1.5, 0);
    recorder_.Record(0x20, a, 3, 100, 2.5, 0);
    recorder_.Record(0x30, a, 3, 100, 3.0, 0);
    recorder_.Forget(0x30);
    recorder_.Record(0x40, a, 3, 7, 1.0, 0);
    recorder_.Record(0x50, b, 2, 4000, 1.0, 0);
  }

  ProfileMetadata Metadata() {
    static const ProfileMapping kMappings[] = {
        {0x400000, 0x500000, 0, "/usr/bin/program", "0123abcd"},
        {0x7f0000000000, 0x7f0000100000, 0x2000, "/lib/libc.so.6", ""},
    };
    static const char* const kComments[] = {"heaprec test", "sample_interval=4096"};
    return {4096, 1700000000000000000, 5000000000, kMappings, 2, kComments, 2};
  }

  SystemMemoryResource memory_;
  HeapRecorder recorder_{memory_, RecorderOptions{}};
};

TEST_F(HeapProfileEncoderTest, WritesGoHeapConventions) {
  Profile p = WriteAndRead(recorder_, Metadata(), memory_);

  ASSERT_EQ(p.sample_types.size(), 4u);
  EXPECT_EQ(p.sample_types[0], (ValueType{"alloc_objects", "count"}));
  EXPECT_EQ(p.sample_types[1], (ValueType{"alloc_space", "bytes"}));
  EXPECT_EQ(p.sample_types[2], (ValueType{"inuse_objects", "count"}));
  EXPECT_EQ(p.sample_types[3], (ValueType{"inuse_space", "bytes"}));
  EXPECT_EQ(p.period_type, (ValueType{"space", "bytes"}));
  EXPECT_EQ(p.period, 4096);
  EXPECT_EQ(p.default_sample_type, "inuse_space");
  EXPECT_EQ(p.time_nanos, 1700000000000000000);
  EXPECT_EQ(p.duration_nanos, 5000000000);
  EXPECT_EQ(p.comments, (std::vector<std::string>{"heaprec test", "sample_interval=4096"}));
  ASSERT_EQ(p.mappings.size(), 2u);
  EXPECT_EQ(p.mappings[0].filename, "/usr/bin/program");
  EXPECT_EQ(p.mappings[0].build_id, "0123abcd");
  EXPECT_EQ(p.mappings[1].file_offset, 0x2000u);

  // Locations are deduplicated (0x402020 is shared) and map to the containing mapping.
  ASSERT_EQ(p.locations.size(), 4u);
  std::map<std::uint64_t, const Location*> by_id;
  for (const Location& l : p.locations) by_id[l.id] = &l;
  for (const Location& l : p.locations) {
    EXPECT_EQ(l.mapping_id, l.address >= 0x7f0000000000 ? 2u : 1u) << std::hex << l.address;
  }

  // One sample per (stack, size): A/100, A/7, B/4000, with the byte label.
  ASSERT_EQ(p.samples.size(), 3u);
  std::map<std::pair<std::uint64_t, std::int64_t>, std::vector<std::int64_t>> values;
  for (const Sample& s : p.samples) {
    ASSERT_EQ(s.labels.size(), 1u);
    EXPECT_EQ(s.labels[0].key, "bytes");
    std::uint64_t leaf = by_id.at(s.location_ids.at(0))->address;
    values[{leaf, s.labels[0].num}] = s.values;
  }
  // A/100: alloc 1.5+2.5+3 = 7 objects, 700 bytes; inuse 4 objects, 400 bytes.
  EXPECT_EQ(values[(std::pair<std::uint64_t, std::int64_t>{0x401010, 100})],
            (std::vector<std::int64_t>{7, 700, 4, 400}));
  EXPECT_EQ(values[(std::pair<std::uint64_t, std::int64_t>{0x401010, 7})],
            (std::vector<std::int64_t>{1, 7, 1, 7}));
  EXPECT_EQ(values[(std::pair<std::uint64_t, std::int64_t>{0x401030, 4000})],
            (std::vector<std::int64_t>{1, 4000, 1, 4000}));
}

// The oldest live object's age at the profile's time (1700000000000000000 in Metadata()), as a
// duration pprof can print: unit nanoseconds.
TEST_F(HeapProfileEncoderTest, OldestLiveObjectsAgeIsALabel) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  constexpr std::uint64_t kNow = 1700000000000000000;
  std::uint64_t a[] = {0x401010}, b[] = {0x401020};
  recorder.Record(0x10, a, 1, 64, 1.0, kNow - 5000);
  recorder.Record(0x20, a, 1, 64, 1.0, kNow - 1500000000);  // the oldest live one: 1.5 s
  recorder.Record(0x30, a, 1, 64, 1.0, kNow - 9000000000);
  recorder.Forget(0x30);  // older still, but dead
  recorder.Record(0x40, a, 1, 128, 1.0, kNow - 7000);
  recorder.Forget(0x40);                              // a group with nothing live: no label
  recorder.Record(0x50, b, 1, 64, 1.0, kNow + 1000);  // after the profile's time (clock set back)
  Profile p = WriteAndRead(recorder, Metadata(), memory);
  ASSERT_EQ(p.samples.size(), 3u);
  std::map<std::uint64_t, std::uint64_t> address_of;
  for (const Location& l : p.locations) address_of[l.id] = l.address;
  for (const Sample& s : p.samples) {
    std::int64_t size = s.labels.at(0).num;
    if (size == 64) {
      ASSERT_EQ(s.labels.size(), 2u);
      EXPECT_EQ(s.labels[1].key, "age_ns");
      bool in_b = address_of.at(s.location_ids.at(0)) == 0x401020;
      EXPECT_EQ(s.labels[1].num, in_b ? 0 : 1500000000);
      EXPECT_EQ(s.labels[1].num_unit, "nanoseconds");
    } else {
      EXPECT_EQ(size, 128);
      EXPECT_EQ(s.labels.size(), 1u);
    }
  }
}

// Temporary samples reach the profile as a `temporary_objects` count on their (stack, size) sample,
// each sample counting as the objects it stands for (its weight at the profile's interval, 4096);
// a sample without temporaries has no such label.
TEST_F(HeapProfileEncoderTest, TemporaryObjectsAreALabelWhereThereAreSome) {
  Profile without = WriteAndRead(recorder_, Metadata(), memory_);
  for (const Sample& s : without.samples) {
    for (const Label& l : s.labels) EXPECT_NE(l.key, "temporary_objects");
  }
  StackId stack = 0;
  {
    HeapSnapshot snapshot;
    ASSERT_TRUE(snapshot.Take(recorder_, SnapshotGrouping::kEachObject));
    for (std::size_t i = 0; i < snapshot.object_count(); ++i) {
      if (snapshot.objects()[i].size == 100) stack = snapshot.objects()[i].stack;
    }
  }
  ASSERT_NE(stack, 0u);
  for (int i = 0; i < 3; ++i) recorder_.CountTemporary(stack, 100, 0);
  Profile p = WriteAndRead(recorder_, Metadata(), memory_);
  const std::int64_t expected =
      std::llround(3 * schema::PerByteSampleWeight(100, Metadata().sample_interval));
  int labelled = 0;
  for (const Sample& s : p.samples) {
    std::int64_t size = 0, temporary = 0;
    for (const Label& l : s.labels) {
      if (l.key == "bytes") size = l.num;
      if (l.key == "temporary_objects") {
        temporary = l.num;
        EXPECT_EQ(l.num_unit, "count");
      }
    }
    if (temporary != 0) ++labelled;
    EXPECT_EQ(temporary, size == 100 ? expected : 0) << size;
  }
  EXPECT_EQ(labelled, 1);
}

TEST_F(HeapProfileEncoderTest, GzipFileSinkWritesAReadableFile) {
  HeapSnapshot snapshot;
  ASSERT_NO_FATAL_FAILURE(TakeSorted(recorder_, &snapshot));
  char path[] = "/tmp/heaprec-writer-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  {
    GzipFileSink sink(fd, memory_);
    ASSERT_TRUE(sink.ok());
    ASSERT_TRUE(EncodeHeapProfile(snapshot, Metadata(), memory_, sink));
    ASSERT_TRUE(sink.Finish());
  }
  close(fd);
  std::ifstream in(path, std::ios::binary);
  std::stringstream raw;
  raw << in.rdbuf();
  unlink(path);
  ASSERT_GE(raw.str().size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw.str()[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(raw.str()[1]), 0x8b);
  Profile p = ReadProfile(raw.str());
  EXPECT_EQ(p.samples.size(), 3u);
}

TEST_F(HeapProfileEncoderTest, FailingSinkIsReported) {
  class FailingSink : public ByteSink {
    bool Write(const void*, std::size_t) override { return false; }
  } sink;
  HeapSnapshot snapshot;
  ASSERT_NO_FATAL_FAILURE(TakeSorted(recorder_, &snapshot));
  EXPECT_FALSE(EncodeHeapProfile(snapshot, Metadata(), memory_, sink));
}

}  // namespace
}  // namespace heaprec
