// The in-process profile encoder for a language runtime's front end: symbolic frames from a
// FrameDescriber (locations with one line and a function, no mapping or address, one function per
// function id), labels from a SampleLabeler per object tag (one sample per (stack, size, tag)), a
// per-object period, and no alloc_ sample types. Also the string table's hash index under many
// strings, and that in native mode the tag-0 group still carries the allocation history.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <protozero/pbf_reader.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/heap_profile_encoder.h"
#include "core/heap_recorder.h"
#include "core/object_sampler.h"
#include "profile/pprof_reader.h"
#include "schema/pprof_fields.h"
#include "write_and_read.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

// The string table as written. The decoded Profile resolves every index, so it cannot show
// whether a string was interned twice; the wire can.
std::vector<std::string> RawStringTable(const std::string& bytes) {
  std::vector<std::string> strings;
  protozero::pbf_reader profile(bytes);
  while (profile.next(pprof::kProfileStringTable)) strings.push_back(profile.get_string());
  return strings;
}

// A runtime's frame as a stack records it (heap_profile_encoder.h: the bit tells it from an
// address).
constexpr std::uint64_t R(std::uint64_t frame) { return kRuntimeFrameBit | frame; }

// Frame value -> description, as an interpreter's frame table would give it.
class TableDescriber final : public FrameDescriber {
 public:
  bool Describe(std::uint64_t frame, Frame* out) const override {
    auto it = frames.find(frame & ~kRuntimeFrameBit);  // keyed by the frames' numbers
    if (it == frames.end()) return false;
    *out = it->second;
    return true;
  }
  std::map<std::uint64_t, Frame> frames;
};

FrameDescriber::Frame Frame(std::uint64_t function_id, const char* name, const char* system_name,
                            const char* filename, std::int64_t line) {
  return {.function_id = function_id,
          .name = name,
          .system_name = system_name,
          .filename = filename,
          .line = line};
}

// Tags encode (class index, GC age, frozen) the way a Ruby front end might: bits 0-7, 8-15, 16.
// Tag 0 gets no labels.
constexpr std::uint64_t Tag(std::uint64_t class_index, std::uint64_t age, bool frozen) {
  return class_index | age << 8 | std::uint64_t{frozen} << 16;
}

class ClassAgeLabeler final : public SampleLabeler {
 public:
  std::size_t Labels(std::uint64_t tag, SampleLabel* out, std::size_t capacity) const override {
    if (tag == 0 || capacity < 3) return 0;
    static const char* const kClasses[] = {"", "String", "Array"};
    out[0] = {"object_class", kClasses[tag & 0xff], 0, nullptr};
    out[1] = {"age", nullptr, static_cast<std::int64_t>((tag >> 8) & 0xff), "gc"};
    out[2] = {"frozen", nullptr, static_cast<std::int64_t>((tag >> 16) & 1), nullptr};
    return 3;
  }
};

ProfileMetadata RuntimeMetadata(std::uint64_t every, const FrameDescriber* frames,
                                const SampleLabeler* labeler) {
  ProfileMetadata m = {};
  m.sample_interval = every;
  m.time_nanos = 1700000000000000000;
  m.duration_nanos = 1000000000;
  m.period_type = "objects";
  m.period_unit = "count";
  m.allocation_totals = false;
  m.frames = frames;
  m.labeler = labeler;
  return m;
}

class SymbolicProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Frames 101 and 102 are two lines of one function (id 1); 105 is a different function with
    // the same name in another file, so it must get its own Function but share the name string.
    // "<main>" has no system name (null: none is written).
    describer_.frames = {
        {101, Frame(1, "Foo#bar", "Foo#bar", "foo.rb", 10)},
        {102, Frame(1, "Foo#bar", "Foo#bar", "foo.rb", 12)},
        {103, Frame(2, "Baz.qux", "Baz.qux", "baz.rb", 3)},
        {104, Frame(3, "<main>", nullptr, "main.rb", 1)},
        {105, Frame(4, "Foo#bar", "Foo#bar", "other.rb", 50)},
    };
    sampler_.Configure(kEvery, 1);
    std::uint64_t a[] = {R(101), R(103), R(104)}, b[] = {R(102), R(103), R(104)},
                  c[] = {R(105), R(104)};
    const std::uint64_t string0 = Tag(1, 0, false), array3 = Tag(2, 3, true);
    struct {
      std::uint64_t key;
      const std::uint64_t* stack;
      std::uint32_t depth;
      std::uint64_t size;
      std::uint64_t tag;
      std::uint64_t alloc_time_ns;
    } objects[] = {
        // Stack A, 40 bytes: three Strings and two frozen Arrays, interleaved by key so only the
        // tag separates them. The Arrays hold the oldest allocation of the (stack, size).
        {1, a, 3, 40, string0, 500}, {2, a, 3, 40, array3, 200},  {3, a, 3, 40, string0, 300},
        {4, a, 3, 40, array3, 100},  {5, a, 3, 40, string0, 400}, {6, b, 3, 40, string0, 600},
        {7, a, 3, 80, string0, 700}, {8, c, 2, 40, string0, 800},
    };
    for (const auto& o : objects) {
      recorder_.Record(o.key, o.stack, o.depth, o.size, sampler_.weight(), o.alloc_time_ns);
      tag_of_[o.key] = o.tag;
    }
  }

  static constexpr std::uint64_t kEvery = 10;
  SystemMemoryResource memory_;
  HeapRecorder recorder_{memory_, RecorderOptions{.keep_allocation_history = false}};
  ObjectSampler sampler_;
  TableDescriber describer_;
  ClassAgeLabeler labeler_;
  TagsByKey tag_of_;
};

TEST_F(SymbolicProfileTest, WritesFunctionsLinesAndTagLabels) {
  const std::string bytes = WriteProfileBytes(
      recorder_, RuntimeMetadata(kEvery, &describer_, &labeler_), memory_, tag_of_);
  Profile p = ReadProfile(bytes);

  // Only the inuse_ pair: this front end keeps no allocation history.
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.sample_types[0], (ValueType{"inuse_objects", "count"}));
  EXPECT_EQ(p.sample_types[1], (ValueType{"inuse_space", "bytes"}));
  EXPECT_EQ(p.period_type, (ValueType{"objects", "count"}));
  EXPECT_EQ(p.period, static_cast<std::int64_t>(kEvery));
  EXPECT_EQ(p.default_sample_type, "inuse_space");
  EXPECT_TRUE(p.mappings.empty());

  // Five distinct frames, four function ids: 101 and 102 share function 1.
  ASSERT_EQ(p.functions.size(), 4u);
  ASSERT_EQ(p.locations.size(), 5u);
  std::map<std::uint64_t, const Function*> function;
  for (const Function& f : p.functions) {
    function[f.id] = &f;
    EXPECT_EQ(f.system_name, f.name == "<main>" ? "" : f.name) << f.name;
  }
  // (function name, file, line) -> location, and a check that each location is purely symbolic.
  using Where = std::tuple<std::string, std::string, std::int64_t>;
  std::map<std::uint64_t, Where> where;
  std::map<Where, std::uint64_t> function_of;
  for (const Location& l : p.locations) {
    EXPECT_EQ(l.address, 0u) << "location " << l.id;
    EXPECT_EQ(l.mapping_id, 0u) << "location " << l.id;
    ASSERT_EQ(l.lines.size(), 1u) << "location " << l.id;
    const Function& f = *function.at(l.lines[0].function_id);
    where[l.id] = {f.name, f.filename, l.lines[0].line};
    function_of[where[l.id]] = f.id;
  }
  const std::set<Where> expected_where = {{"Foo#bar", "foo.rb", 10},
                                          {"Foo#bar", "foo.rb", 12},
                                          {"Baz.qux", "baz.rb", 3},
                                          {"<main>", "main.rb", 1},
                                          {"Foo#bar", "other.rb", 50}};
  std::set<Where> written;
  for (const auto& [id, w] : where) written.insert(w);
  EXPECT_EQ(written, expected_where);
  const std::uint64_t line_10 = function_of[Where("Foo#bar", "foo.rb", 10)];
  EXPECT_EQ(line_10, (function_of[Where("Foo#bar", "foo.rb", 12)]));
  EXPECT_NE(line_10, (function_of[Where("Foo#bar", "other.rb", 50)]));

  // One sample per (stack, size, tag). Values are sums of weights (N = 10 per object).
  struct Expected {
    std::vector<Where> stack;
    std::vector<std::int64_t> values;
    std::vector<Label> labels;
  };
  const std::vector<Where> stack_a = {
      {"Foo#bar", "foo.rb", 10}, {"Baz.qux", "baz.rb", 3}, {"<main>", "main.rb", 1}};
  const std::vector<Where> stack_b = {
      {"Foo#bar", "foo.rb", 12}, {"Baz.qux", "baz.rb", 3}, {"<main>", "main.rb", 1}};
  const std::vector<Where> stack_c = {{"Foo#bar", "other.rb", 50}, {"<main>", "main.rb", 1}};
  // `oldest`: the oldest object's allocation time; the label is its age at the profile's time.
  auto labels = [](std::int64_t size, std::int64_t oldest, const char* cls, std::int64_t age,
                   std::int64_t frozen) {
    return std::vector<Label>{{"bytes", "", size, "bytes"},
                              {"age_ns", "", 1700000000000000000 - oldest, "nanoseconds"},
                              {"object_class", cls, 0, ""},
                              {"age", "", age, "gc"},
                              {"frozen", "", frozen, ""}};
  };
  const std::vector<Expected> expected = {
      {stack_a, {30, 1200}, labels(40, 300, "String", 0, 0)},  // keys 1, 3, 5
      {stack_a, {20, 800}, labels(40, 100, "Array", 3, 1)},    // keys 2, 4
      {stack_b, {10, 400}, labels(40, 600, "String", 0, 0)},
      {stack_a, {10, 800}, labels(80, 700, "String", 0, 0)},
      {stack_c, {10, 400}, labels(40, 800, "String", 0, 0)},
  };
  ASSERT_EQ(p.samples.size(), expected.size());
  std::vector<bool> matched(expected.size(), false);
  for (const Sample& s : p.samples) {
    std::vector<Where> stack;
    for (std::uint64_t id : s.location_ids) stack.push_back(where.at(id));
    bool found = false;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (!matched[i] && expected[i].stack == stack && expected[i].labels == s.labels) {
        EXPECT_EQ(s.values, expected[i].values) << "sample " << i;
        matched[i] = found = true;
        break;
      }
    }
    EXPECT_TRUE(found) << "unexpected sample with " << s.labels.size() << " labels, leaf "
                       << std::get<0>(stack.at(0)) << ":" << std::get<2>(stack.at(0));
  }

  // Every string once, "" first: "Foo#bar" names two functions, "String" labels four samples,
  // "count" and "bytes" serve as units of several kinds.
  std::vector<std::string> table = RawStringTable(bytes);
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(table[0], "");
  std::set<std::string> distinct(table.begin(), table.end());
  EXPECT_EQ(distinct.size(), table.size());
  for (const char* s : {"Foo#bar", "String", "Array", "count", "bytes", "objects", "gc"}) {
    EXPECT_TRUE(distinct.count(s)) << s;
  }
}

TEST_F(SymbolicProfileTest, TagZeroWithoutLabelerIsOneGroupPerStackAndSize) {
  // The same objects untagged and without a labeler: stack A's five 40-byte objects merge again.
  Profile p = WriteAndRead(recorder_, RuntimeMetadata(kEvery, &describer_, nullptr), memory_);
  ASSERT_EQ(p.samples.size(), 4u);
  std::multiset<std::vector<std::int64_t>> values;
  for (const Sample& s : p.samples) {
    values.insert(s.values);
    EXPECT_EQ(s.labels.size(), 2u);  // bytes and age_ns only
  }
  EXPECT_EQ(values, (std::multiset<std::vector<std::int64_t>>{
                        {50, 2000}, {10, 400}, {10, 800}, {10, 400}}));
}

// The header's contract: a frame the describer cannot describe drops the samples that contain it,
// and the rest of the profile is written. (Frame 999 is unknown to the describer; it appears in
// two stacks, so the second one must not refer to a location that was never written either.)
TEST_F(SymbolicProfileTest, UndescribableFrameDropsOnlyItsSamples) {
  std::uint64_t bad1[] = {R(999), R(104)}, bad2[] = {R(103), R(999)};
  recorder_.Record(100, bad1, 2, 40, sampler_.weight(), 0);
  recorder_.Record(101, bad2, 2, 40, sampler_.weight(), 0);
  Profile p = WriteAndRead(recorder_, RuntimeMetadata(kEvery, &describer_, nullptr), memory_);
  EXPECT_EQ(p.samples.size(), 4u);  // the four groups of SetUp's objects
}

TEST(HeapProfileEncoderStringsTest, TwentyThousandFunctionNamesRoundTrip) {
  // 200 stacks of depth 100, every frame its own function: 20000 names (many prefixes of each
  // other: fn_1, fn_10, fn_100, ...) and 97 file names through the string table's hash index,
  // which must grow many times over.
  constexpr std::uint64_t kStacks = 200, kDepth = 100, kFrames = kStacks * kDepth;
  std::vector<std::string> names, files;
  for (std::uint64_t f = 0; f < kFrames; ++f) names.push_back("fn_" + std::to_string(f + 1));
  for (int i = 0; i < 97; ++i) files.push_back("lib/file_" + std::to_string(i) + ".rb");
  TableDescriber describer;
  for (std::uint64_t f = 0; f < kFrames; ++f) {
    // Function ids deliberately unlike frame values; line = frame index; odd frames have no
    // system name.
    describer.frames[f + 1] =
        Frame(1000000 + f * 7, names[f].c_str(), f % 2 ? nullptr : names[f].c_str(),
              files[f % 97].c_str(), static_cast<std::int64_t>(f));
  }
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{.keep_allocation_history = false});
  for (std::uint64_t s = 0; s < kStacks; ++s) {
    std::uint64_t frames[kDepth];
    for (std::uint64_t d = 0; d < kDepth; ++d) frames[d] = R(s * kDepth + d + 1);
    // The size identifies the stack in the decoded profile.
    recorder.Record(s + 1, frames, kDepth, s + 1, 1.0, 0);
  }
  const std::string bytes =
      WriteProfileBytes(recorder, RuntimeMetadata(1, &describer, nullptr), memory);
  Profile p = ReadProfile(bytes);

  ASSERT_EQ(p.functions.size(), kFrames);
  ASSERT_EQ(p.locations.size(), kFrames);
  ASSERT_EQ(p.samples.size(), kStacks);
  std::map<std::uint64_t, const Function*> function;
  for (const Function& f : p.functions) function[f.id] = &f;
  std::map<std::uint64_t, const Location*> location;
  for (const Location& l : p.locations) location[l.id] = &l;
  int mismatches = 0;
  for (const Sample& s : p.samples) {
    std::uint64_t stack = static_cast<std::uint64_t>(s.labels.at(0).num) - 1;
    ASSERT_EQ(s.location_ids.size(), kDepth);
    for (std::uint64_t d = 0; d < kDepth; ++d) {
      std::uint64_t f = stack * kDepth + d;
      const Location& l = *location.at(s.location_ids[d]);
      const Function& fn = *function.at(l.lines.at(0).function_id);
      bool ok = fn.name == names[f] && fn.system_name == (f % 2 ? "" : names[f]) &&
                fn.filename == files[f % 97] && l.lines[0].line == static_cast<std::int64_t>(f);
      if (!ok && ++mismatches <= 5) {
        ADD_FAILURE() << "frame " << f + 1 << ": got " << fn.name << " " << fn.filename << ":"
                      << l.lines[0].line;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);

  std::vector<std::string> table = RawStringTable(bytes);
  std::set<std::string> distinct(table.begin(), table.end());
  EXPECT_EQ(distinct.size(), table.size()) << "a string was interned twice";
  for (const std::string& n : names) ASSERT_TRUE(distinct.count(n)) << n;
  for (const std::string& f : files) ASSERT_TRUE(distinct.count(f)) << f;
}

// Native mode (addresses, no describer or labeler): a group whose objects keep tag 0 still gets
// the allocation history's totals in the same sample, and a front end's non-zero tag splits its
// objects into a sample of their own that carries no history.
TEST(HeapProfileEncoderNativeTagsTest, TagZeroMergesHistoryAndOtherTagsSplit) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  std::uint64_t a[] = {0x401010, 0x402020};
  recorder.Record(0x10, a, 2, 100, 1.25, 0);
  recorder.Record(0x20, a, 2, 100, 2.75, 0);
  recorder.Record(0x30, a, 2, 100, 3.0, 0);
  ASSERT_TRUE(recorder.Forget(0x30));
  ProfileMetadata metadata = {};
  metadata.sample_interval = 4096;

  // All tag 0: one sample, alloc 1.25 + 2.75 + 3 = 7 objects / 700 bytes, inuse 4 / 400.
  Profile merged = WriteAndRead(recorder, metadata, memory);
  ASSERT_EQ(merged.sample_types.size(), 4u);
  EXPECT_EQ(merged.period_type, (ValueType{"space", "bytes"}));
  EXPECT_TRUE(merged.functions.empty());
  for (const Location& l : merged.locations) {
    EXPECT_NE(l.address, 0u);
    EXPECT_TRUE(l.lines.empty());
  }
  ASSERT_EQ(merged.samples.size(), 1u);
  EXPECT_EQ(merged.samples[0].values, (std::vector<std::int64_t>{7, 700, 4, 400}));

  // 0x20 tagged 5: the tag-0 group keeps the history and 0x10 (1.25 -> 1, 125 bytes); the tag-5
  // group has only 0x20's live values (2.75 -> 3, 275 bytes).
  Profile split = WriteAndRead(recorder, metadata, memory, {{0x20, 5}});
  ASSERT_EQ(split.samples.size(), 2u);
  std::multiset<std::vector<std::int64_t>> values;
  for (const Sample& s : split.samples) values.insert(s.values);
  EXPECT_EQ(values, (std::multiset<std::vector<std::int64_t>>{{7, 700, 1, 125}, {0, 0, 3, 275}}));
}

// A front end that keys its history by a tag and knows no sizes (Ruby: the class, at NEWOBJ):
// alloc_objects only (no alloc_space), each history entry a sample of its own tag's labels with no
// bytes label, apart from the live objects' samples, which keep theirs.
TEST(HeapProfileEncoderHistoryTagsTest, TaggedHistoryWithoutSizes) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  TableDescriber describer;
  describer.frames = {{101, Frame(1, "Foo#bar", nullptr, "foo.rb", 10)}};
  ClassAgeLabeler labeler;
  std::uint64_t a[] = {R(101)};
  const std::uint32_t string_tag = Tag(1, 0, false), array_tag = Tag(2, 0, false);
  // 3 Strings (one stays live) and 2 Arrays allocated, weight 10 each; the front end records size
  // 0 and measures the live String at its dump: 40 bytes, age 3.
  recorder.Record(1, a, 1, 0, 10, 0, 0, string_tag);
  recorder.Record(2, a, 1, 0, 10, 0, 0, string_tag);
  recorder.Record(3, a, 1, 0, 10, 0, 0, string_tag);
  recorder.Record(4, a, 1, 0, 10, 0, 0, array_tag);
  recorder.Record(5, a, 1, 0, 10, 0, 0, array_tag);
  for (std::uint64_t dead : {2, 3, 4, 5}) ASSERT_TRUE(recorder.Forget(dead));
  ProfileMetadata m = RuntimeMetadata(10, &describer, &labeler);
  m.allocation_totals = true;
  m.allocation_sizes = false;

  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder, SnapshotGrouping::kEachObject));
  ASSERT_EQ(snapshot.object_count(), 1u);
  snapshot.mutable_objects()[0].size = 40;
  snapshot.mutable_objects()[0].tag = Tag(1, 3, false);
  snapshot.SortByStackAndSize();
  StringSink sink;
  ASSERT_TRUE(EncodeHeapProfile(snapshot, m, memory, sink));
  Profile p = ReadProfile(sink.bytes);

  EXPECT_EQ(p.sample_types,
            (std::vector<ValueType>{
                {"alloc_objects", "count"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}}));
  // (class, age, bytes label or -1) -> values
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::vector<std::int64_t>> samples;
  for (const Sample& s : p.samples) {
    std::string klass;
    std::int64_t age = -1, bytes = -1;
    for (const Label& l : s.labels) {
      if (l.key == "object_class") klass = l.str;
      if (l.key == "age") age = l.num;
      if (l.key == "bytes") bytes = l.num;
    }
    ASSERT_TRUE(samples.emplace(std::make_tuple(klass, age, bytes), s.values).second);
  }
  using Key = std::tuple<std::string, std::int64_t, std::int64_t>;
  EXPECT_EQ(samples, (std::map<Key, std::vector<std::int64_t>>{
                         {Key{"String", 0, -1}, {30, 0, 0}},
                         {Key{"Array", 0, -1}, {20, 0, 0}},
                         {Key{"String", 3, 40}, {0, 10, 400}},
                     }));
}

// A runtime front end's native byte samples (the Ruby extension's,
// ruby/ext/heaprec/native_bytes.h): entries added from another recorder with
// HeapSnapshot::AddObject, their stacks native addresses leaf-most (locations with an address and a
// mapping) and runtime frames root-most (symbolic locations); their tag counts no objects, so they
// add bytes to inuse_space and nothing to inuse_objects, beside the runtime's own objects.
class NativeBlocksLabeler final : public SampleLabeler {
 public:
  static constexpr std::uint64_t kNativeTag = 7;
  std::size_t Labels(std::uint64_t tag, SampleLabel* out, std::size_t capacity) const override {
    if (tag != kNativeTag || capacity < 1) return 0;
    out[0] = {"byte_interval", nullptr, 4096, "bytes"};
    return 1;
  }
  bool CountsObjects(std::uint64_t tag) const override { return tag != kNativeTag; }
};

// `count` native blocks of `size` bytes standing for `weight` each, as a front end adds them.
HeapSnapshot::Object NativeBlocks(std::uint64_t size, double weight, std::uint64_t count) {
  HeapSnapshot::Object blocks = {};
  blocks.size = size;
  blocks.weight = weight;
  blocks.count = count;
  blocks.tag = NativeBlocksLabeler::kNativeTag;
  return blocks;
}

TEST(HeapProfileEncoderMixedFramesTest, NativeBlocksJoinARuntimeProfileAsBytesOnly) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  TableDescriber describer;
  describer.frames = {{101, Frame(1, "String#*", nullptr, "app.rb", 7)},
                      {102, Frame(2, "<main>", nullptr, "app.rb", 1)}};
  NativeBlocksLabeler labeler;
  std::uint64_t object_stack[] = {R(101), R(102)};
  recorder.Record(1, object_stack, 2, 40, 10, 0);  // one object, weight 10, 40 bytes
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder, SnapshotGrouping::kEachObject));
  // Two native blocks of 1,000 bytes, standing for 2.5: malloc's caller, then the runtime's frames.
  std::uint64_t native_stack[] = {0x401010, 0x402020, R(101), R(102)};
  ASSERT_TRUE(snapshot.AddObject(native_stack, 4, NativeBlocks(1000, 2.5, 2)));
  ASSERT_EQ(snapshot.object_count(), 2u);
  snapshot.SortByStackAndSize();
  ProfileMapping mapping = {0x400000, 0x500000, 0, "/usr/lib/libruby.so", "abcd"};
  ProfileMetadata m = RuntimeMetadata(10, &describer, &labeler);
  m.mappings = &mapping;
  m.mapping_count = 1;
  StringSink sink;
  ASSERT_TRUE(EncodeHeapProfile(snapshot, m, memory, sink));
  snapshot.Release();
  Profile p = ReadProfile(sink.bytes);

  std::map<std::uint64_t, const Location*> location;
  for (const Location& l : p.locations) location[l.id] = &l;
  ASSERT_EQ(p.samples.size(), 2u);
  for (const Sample& s : p.samples) {
    bool native = std::any_of(s.labels.begin(), s.labels.end(),
                              [](const Label& l) { return l.key == "byte_interval"; });
    if (!native) {
      EXPECT_EQ(s.values, (std::vector<std::int64_t>{10, 400}));  // inuse_objects, inuse_space
      continue;
    }
    EXPECT_EQ(s.values, (std::vector<std::int64_t>{0, 2500}));
    ASSERT_EQ(s.location_ids.size(), 4u);
    const Location& leaf = *location.at(s.location_ids[0]);
    EXPECT_EQ(leaf.address, 0x401010u);
    EXPECT_EQ(leaf.mapping_id, 1u);
    EXPECT_TRUE(leaf.lines.empty());
    const Location& ruby = *location.at(s.location_ids[2]);
    EXPECT_EQ(ruby.address, 0u);
    ASSERT_EQ(ruby.lines.size(), 1u);
    EXPECT_EQ(ruby.lines[0].line, 7);
  }
  // The interned stack was given back: the recorder holds the object's stack alone.
  EXPECT_EQ(recorder.Stats().stacks, 1u);
}

// Names every address after its one mapping, with the key 1 that the describer also gives a
// function (String#*): the Ruby front end's placeholder names, keyed by mapping index.
class MappingNamer final : public AddressNamer {
 public:
  const char* Name(std::uint64_t, std::size_t, std::uint64_t* function_key) const override {
    *function_key = 1;
    return "[libruby.so]";
  }
  bool NamesMapping(std::size_t) const override { return true; }
};

TEST(HeapProfileEncoderMixedFramesTest, NamedNativeFramesAndTheFrontEndsDropFrames) {
  SystemMemoryResource memory;
  HeapRecorder recorder(memory, RecorderOptions{});
  TableDescriber describer;
  describer.frames = {{101, Frame(1, "String#*", nullptr, "app.rb", 7)}};
  NativeBlocksLabeler labeler;
  HeapSnapshot snapshot;
  ASSERT_TRUE(snapshot.Take(recorder, SnapshotGrouping::kEachObject));
  std::uint64_t native_stack[] = {0x401010, R(101)};
  ASSERT_TRUE(snapshot.AddObject(native_stack, 2, NativeBlocks(1000, 1, 1)));
  snapshot.SortByStackAndSize();
  ProfileMapping mapping = {0x400000, 0x500000, 0, "/usr/lib/libruby.so", "abcd"};
  MappingNamer namer;
  ProfileMetadata m = RuntimeMetadata(10, &describer, &labeler);
  m.mappings = &mapping;
  m.mapping_count = 1;
  m.names = &namer;
  m.drop_frames = "[a-z_]+|\\[[^\\]]+\\]";
  m.keep_frames = "";
  StringSink sink;
  ASSERT_TRUE(EncodeHeapProfile(snapshot, m, memory, sink));
  snapshot.Release();
  Profile p = ReadProfile(sink.bytes);

  EXPECT_EQ(p.drop_frames, "[a-z_]+|\\[[^\\]]+\\]");
  EXPECT_EQ(p.keep_frames, "");
  ASSERT_EQ(p.mappings.size(), 1u);
  EXPECT_TRUE(p.mappings[0].has_functions);
  ASSERT_EQ(p.samples.size(), 1u);
  std::map<std::uint64_t, const Location*> location;
  for (const Location& l : p.locations) location[l.id] = &l;
  std::map<std::uint64_t, const Function*> function;
  for (const Function& f : p.functions) function[f.id] = &f;
  const Location& native = *location.at(p.samples[0].location_ids[0]);
  const Location& ruby = *location.at(p.samples[0].location_ids[1]);
  ASSERT_EQ(native.lines.size(), 1u);
  ASSERT_EQ(ruby.lines.size(), 1u);
  // The same key from both sides, two functions.
  EXPECT_NE(native.lines[0].function_id, ruby.lines[0].function_id);
  EXPECT_EQ(function.at(native.lines[0].function_id)->name, "[libruby.so]");
  EXPECT_EQ(function.at(ruby.lines[0].function_id)->name, "String#*");
}

}  // namespace
}  // namespace heaprec
