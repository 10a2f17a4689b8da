// The view every analysis shares (analysis/profile_view.h): the frames of each location and the
// functions they name, unsymbolized addresses, Ruby functions' lines, the frames that are not the
// user's code and each sample's stack from its allocation site, one frame per line, the line
// tally, paired sample types, object sizes and variances, the sample index, comment fields and
// labels.
#include "analysis/profile_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime_stack_profile.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;

enum Type { kAllocObjects, kAllocSpace, kInuseObjects, kInuseSpace };  // MakeReportProfile's

const FrameId& FrameFunction(const ProfileView& view, const LocationFrame& frame) {
  return view.functions()[frame.function];
}

TEST(ProfileViewTest, FramesOfALocationInnermostFirst) {
  Profile p = test_support::MakeReportProfile();
  ProfileView view(p);
  // Location 2: ns::Inner() (inner.h:31) inlined into ns::Build(int) (build.cc:22).
  std::span<const LocationFrame> frames = view.Frames(2);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(FrameFunction(view, frames[0]).function, "ns::Inner") << "short names by default";
  EXPECT_EQ(frames[0].line, 31);
  EXPECT_TRUE(frames[0].inlined);
  EXPECT_EQ(FrameFunction(view, frames[1]).function, "ns::Build");
  EXPECT_EQ(frames[1].line, 22);
  EXPECT_FALSE(frames[1].inlined);
  const FrameId& inner = FrameFunction(view, frames[0]);
  EXPECT_TRUE(inner.symbolized());
  EXPECT_EQ(inner.file, "/src/inner.h");
  EXPECT_EQ(inner.line, 30) << "the function's start line";
  EXPECT_EQ(inner.DisplayName(), "ns::Inner");
  EXPECT_EQ(inner.Label(), "ns::Inner inner.h:30");
  EXPECT_TRUE(view.Frames(99).empty()) << "unknown location";

  ViewOptions full_names;
  full_names.full_names = true;
  ProfileView full(p, full_names);
  EXPECT_EQ(FrameFunction(full, full.Frames(2)[0]).function, "ns::Inner()");
  EXPECT_EQ(FrameFunction(full, full.Frames(2)[1]).function, "ns::Build(int)");
}

TEST(ProfileViewTest, OneFunctionPerNameAndFile) {
  Profile p = test_support::MakeReportProfile();
  // A duplicate Function entry of main, and a function only known by its system name.
  p.functions.push_back({.id = 5, .name = "main", .filename = "/src/main.cc", .start_line = 10});
  p.functions.push_back({.id = 6, .system_name = "_Z4workv", .filename = "/src/work.cc"});
  p.locations.push_back({.id = 5, .mapping_id = 1, .address = 0x404000, .lines = {{5, 12}}});
  p.locations.push_back({.id = 6, .mapping_id = 1, .address = 0x405000, .lines = {{6, 3}}});
  ProfileView view(p);
  EXPECT_EQ(view.Frames(5)[0].function, view.Frames(3)[0].function);
  EXPECT_EQ(view.Frames(5)[0].line, 12);
  EXPECT_EQ(FrameFunction(view, view.Frames(6)[0]).function, "_Z4workv");
  EXPECT_EQ(view.functions().size(), 6u);  // main, Build, Inner, Alloc, 0x1234, _Z4workv
}

TEST(ProfileViewTest, UnsymbolizedAddressesAreNamedInTheirMapping) {
  Profile p = test_support::MakeReportProfile();
  p.locations.push_back({.id = 7, .address = 0x9999});  // in no mapping
  ProfileView view(p);
  ASSERT_EQ(view.Frames(4).size(), 1u);
  const FrameId& lib = FrameFunction(view, view.Frames(4)[0]);
  EXPECT_FALSE(lib.symbolized());
  EXPECT_EQ(lib.function, "0x1234");
  EXPECT_EQ(lib.address, "0x1234");
  EXPECT_EQ(lib.mapping, "libfoo.so");
  EXPECT_EQ(lib.DisplayName(), "0x1234 (libfoo.so)");
  EXPECT_EQ(lib.Label(), "0x1234 (libfoo.so)");
  const FrameId& nowhere = FrameFunction(view, view.Frames(7)[0]);
  EXPECT_EQ(nowhere.mapping, "");
  EXPECT_EQ(nowhere.Label(), "0x9999");
  EXPECT_EQ(HexAddress(0x4011f0), "0x4011f0");
  EXPECT_EQ(BaseName("/usr/lib/libc.so.6"), "libc.so.6");
  EXPECT_EQ(BaseName("libc.so.6"), "libc.so.6");
}

TEST(ProfileViewTest, RubyFunctionsShowTheirSmallestLine) {
  Profile p = test_support::MakeRubyProfile();
  ProfileView view(p);
  auto function = [&](uint64_t location) { return FrameFunction(view, view.Frames(location)[0]); };
  // Cache#fill is at line 11 in location 3 and at line 15 in location 5.
  EXPECT_EQ(function(3).function, "Cache#fill");
  EXPECT_EQ(function(3).line, 11);
  EXPECT_EQ(function(5).line, 11);
  EXPECT_EQ(view.Frames(5)[0].line, 15) << "the frame keeps its own line";
  EXPECT_EQ(function(3).Label(), "Cache#fill cache.rb:11");
  // A method written in C: no file, no line.
  EXPECT_EQ(function(2).Label(), "Integer#times");
  EXPECT_EQ(function(4).Label(), "<main> app.rb:5");
}

// The function names of a sample's stack from its site, leaf first, with each frame's line.
std::string SiteStackNames(const ProfileView& view, const Sample& s) {
  std::vector<LocationFrame> stack = {{.function = 0}};  // replaced, not appended to
  view.SiteStack(s, stack);
  std::string names;
  for (const LocationFrame& frame : stack) {
    names += FrameFunction(view, frame).function + ":" + std::to_string(frame.line) +
             (frame.inlined ? " (inlined)" : "") + "; ";
  }
  return names;
}

TEST(ProfileViewTest, RuntimeFramesAndTheSiteStack) {
  using namespace ::heaprec::test_support::runtime_stack;  // NOLINT: the fixture's ids
  Profile p = MakeRuntimeStackProfile();
  ProfileView view(p);
  auto runtime = [&](uint64_t location, size_t frame = 0) {
    return FrameFunction(view, view.Frames(location)[frame]).runtime;
  };
  EXPECT_TRUE(runtime(1)) << "malloc";
  EXPECT_TRUE(runtime(2)) << "operator new";
  EXPECT_TRUE(runtime(3, 0)) << "std::vector::_M_realloc_insert, inlined";
  EXPECT_FALSE(runtime(3, 1)) << "Store::Put";
  EXPECT_FALSE(runtime(7)) << "main: a user function (tables leave it out, not the view)";
  EXPECT_TRUE(runtime(9)) << "__libc_start_call_main";
  EXPECT_TRUE(runtime(10)) << "_start, in the program's own mapping";
  EXPECT_EQ(FrameFunction(view, view.Frames(3)[0]).function, "std::vector::_M_realloc_insert");

  // From the first frame that is not the runtime's: inlined frames of a location count one by one.
  EXPECT_EQ(SiteStackNames(view, p.samples[0]),
            "Store::Put:12; main:30; __libc_start_call_main:0; _start:0; ");
  EXPECT_EQ(SiteStackNames(view, p.samples[1]),
            "Store::Put:14; main:30; __libc_start_call_main:0; _start:0; ");
  EXPECT_EQ(SiteStackNames(view, p.samples[2]),
            "Store::Put:22; main:31; __libc_start_call_main:0; _start:0; ");
  // A stack that is all runtime keeps every frame: its leaf is its site.
  EXPECT_EQ(SiteStackNames(view, p.samples[3]),
            "malloc:0; _IO_file_doallocate:0; __libc_start_call_main:0; _start:0; ");
  // Short names merge the overloads; the full ones keep them apart.
  EXPECT_EQ(view.Frames(3)[1].function, view.Frames(6)[0].function);
  ProfileView full(p, {.full_names = true});
  EXPECT_NE(full.Frames(3)[1].function, full.Frames(6)[0].function);
  EXPECT_EQ(FrameFunction(full, full.Frames(6)[0]).function,
            "Store::Put(std::__cxx11::basic_string<char, std::char_traits<char>, "
            "std::allocator<char> > const&)");
  EXPECT_TRUE(FrameFunction(full, full.Frames(1)[0]).runtime);
  // The rule reads the short name: the full one starts with the return type, "void std::...".
  const FrameId& realloc_insert = FrameFunction(full, full.Frames(5)[0]);
  EXPECT_EQ(realloc_insert.function.rfind("void std::vector<int, std::allocator<int> >::", 0), 0u);
  EXPECT_TRUE(realloc_insert.runtime);
  EXPECT_EQ(SiteStackNames(full, p.samples[0]),
            "Store::Put(int):12; main:30; __libc_start_call_main:0; _start:0; ");

  // Without the defaults, the stack is the recorded one.
  ProfileView all(p, {.sites = SiteRule::WithoutDefaults()});
  EXPECT_EQ(SiteStackNames(all, p.samples[1]),
            "malloc:0; operator new:0; Store::Put:14; main:30; __libc_start_call_main:0; "
            "_start:0; ");
  EXPECT_EQ(SiteStackNames(all, p.samples[0])
                .rfind("malloc:0; operator new:0; "
                       "std::vector::_M_realloc_insert:440 (inlined); "
                       "Store::Put:12; ",
                       0),
            0u);
  // A user pattern: Store::Put is not the site either; main is.
  SiteRule rule;
  rule.AddSkip("^Store::Put$");
  ProfileView skip(p, {.sites = rule});
  EXPECT_EQ(SiteStackNames(skip, p.samples[0]), "main:30; __libc_start_call_main:0; _start:0; ");
}

TEST(ProfileViewTest, OneFramePerLine) {
  Profile p = test_support::runtime_stack::MakeRuntimeStackProfile();
  ProfileView view(p, {.lines = true});
  const FrameId& at12 = FrameFunction(view, view.Frames(3)[1]);
  const FrameId& at14 = FrameFunction(view, view.Frames(4)[0]);
  const FrameId& at22 = FrameFunction(view, view.Frames(6)[0]);
  EXPECT_EQ(at12.function, "Store::Put");
  EXPECT_EQ(at12.line, 12) << "the frame's line, not the function's first";
  EXPECT_EQ(at14.line, 14);
  EXPECT_EQ(at22.line, 22);
  EXPECT_NE(at12.key, at14.key);
  EXPECT_EQ(at12.Label(), "Store::Put store.cc:12");
  // By function, one FrameId at the function's start line.
  ProfileView functions(p);
  EXPECT_EQ(functions.Frames(3)[1].function, functions.Frames(4)[0].function);
  EXPECT_EQ(FrameFunction(functions, functions.Frames(4)[0]).line, 10);
}

TEST(LineTallyTest, HeaviestLine) {
  LineTally tally;
  EXPECT_EQ(tally.Heaviest(7), 7) << "none known: the fallback";
  tally.Add(0, 1000);  // unknown lines do not count
  EXPECT_EQ(tally.Heaviest(7), 7);
  tally.Add(20, 5);
  tally.Add(10, 5);
  EXPECT_EQ(tally.Heaviest(7), 10) << "a tie: the smaller line";
  tally.Add(20, 1);
  EXPECT_EQ(tally.Heaviest(7), 20);
  tally.Add(30, -10);  // a diff profile's negative values weigh by their magnitude
  EXPECT_EQ(tally.Heaviest(7), 30);
  tally.Add(20, 4);
  EXPECT_EQ(tally.Heaviest(7), 20) << "totals add up: 20 holds 10 now, as much as 30";
}

TEST(ProfileViewTest, PairedTypesAndObjectSizes) {
  Profile p = test_support::MakeReportProfile();
  ProfileView view(p);
  EXPECT_EQ(view.PairedType(kInuseSpace), kInuseObjects);
  EXPECT_EQ(view.PairedType(kInuseObjects), kInuseSpace);
  EXPECT_EQ(view.PairedType(kAllocObjects), kAllocSpace);
  EXPECT_EQ(view.PairedType(7), -1);
  // No `bytes` label: space / objects, 3 MiB in 3 objects.
  EXPECT_EQ(view.ObjectSize(p.samples[0], kInuseSpace), 1 << 20);
  Sample labelled = p.samples[0];
  labelled.labels = {{.key = "bytes", .num = 4096, .num_unit = "bytes"}};
  EXPECT_EQ(view.ObjectSize(labelled, kInuseSpace), 4096);
  // No in-use objects: the allocation family's sizes.
  Sample freed = p.samples[2];
  freed.values = {7, 7 * 64, 0, 0};
  EXPECT_EQ(view.ObjectSize(freed, kInuseSpace), 64);
  freed.values = {0, 0, 0, 0};
  EXPECT_EQ(view.ObjectSize(freed, kInuseSpace), -1);
}

TEST(ProfileViewTest, EstimatesAndVariances) {
  Profile sampled = test_support::MakeReportProfile();
  ProfileView view(sampled);
  EXPECT_TRUE(view.sampling().sampled());
  EXPECT_TRUE(view.IsEstimate(kInuseSpace));
  EXPECT_FALSE(view.IsEstimate(9));
  const Sample& s = sampled.samples[0];
  EXPECT_DOUBLE_EQ(view.Variance(s, kInuseSpace),
                   ValueVariance("inuse_space", s.values[kInuseSpace], 1 << 20, view.sampling()));
  EXPECT_GT(view.Variance(s, kInuseSpace), 0);
  // Neither a `bytes` label nor an objects value: the variance is unknown.
  Profile unknown;
  unknown.sample_types = {{"inuse_space", "bytes"}};
  unknown.period_type = {"space", "bytes"};
  unknown.period = 524288;
  unknown.samples = {{.values = {1000}}};
  EXPECT_TRUE(std::isnan(ProfileView(unknown).Variance(unknown.samples[0], 0)));
  // Exact values, and types heaprec does not sample, have none.
  Profile exact = test_support::MakeReportProfile();
  exact.period = 1;
  EXPECT_FALSE(ProfileView(exact).IsEstimate(kInuseSpace));
  EXPECT_EQ(ProfileView(exact).Variance(exact.samples[0], kInuseSpace), 0);
  Profile custom = sampled;
  custom.sample_types[kInuseSpace].type = "custom";
  EXPECT_FALSE(ProfileView(custom).IsEstimate(kInuseSpace));
  EXPECT_EQ(ProfileView(custom).Variance(custom.samples[0], kInuseSpace), 0);
}

TEST(ProfileViewTest, SampleIndex) {
  Profile p = test_support::MakeReportProfile();
  EXPECT_EQ(SelectSampleIndex(p, ""), size_t{kInuseSpace});
  EXPECT_EQ(SelectSampleIndex(p, "alloc_objects"), size_t{kAllocObjects});
  p.default_sample_type = "";
  EXPECT_EQ(SelectSampleIndex(p, ""), size_t{kInuseSpace}) << "pprof's rule: the last type";
  try {
    SelectSampleIndex(p, "cpu");
    FAIL() << "no error";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown sample index 'cpu'; this profile has: alloc_objects, alloc_space, "
                 "inuse_objects, inuse_space");
  }
  EXPECT_THROW(SelectSampleIndex(Profile{}, ""), UnknownSampleIndexError);
  EXPECT_TRUE(IsHeapSampleType("inuse_space"));
  EXPECT_TRUE(IsHeapSampleType("alloc_objects"));
  EXPECT_FALSE(IsHeapSampleType("cpu"));
}

TEST(ProfileViewTest, CommentFieldsAndLabels) {
  Profile p = test_support::MakeReportProfile();
  p.comments = {"heaprec " HEAPREC_VERSION, "pid=42 reason=peak", "sample_interval=524288"};
  EXPECT_EQ(CommentField(p, "reason"), "peak");
  EXPECT_EQ(CommentField(p, "sample_interval"), "524288");
  EXPECT_EQ(CommentField(p, "signal"), std::nullopt);
  EXPECT_EQ(ProfilePid(p), 42);
  EXPECT_TRUE(IsPeakProfile(p));
  p.comments = {"pid=4x reason=exit"};
  EXPECT_EQ(ProfilePid(p), std::nullopt);
  EXPECT_FALSE(IsPeakProfile(p));
  p.comments = {"pid="};
  EXPECT_EQ(ProfilePid(p), std::nullopt);

  Profile r = test_support::MakeRubyProfile();
  const Sample& ruby = r.samples[0];
  EXPECT_EQ(NumericLabel(ruby, "bytes"), 40);
  EXPECT_EQ(NumericLabel(ruby, "class"), -1) << "a string label";
  EXPECT_EQ(NumericLabel(ruby, "thread"), -1);
  ASSERT_NE(StringLabel(ruby, "class"), nullptr);
  EXPECT_EQ(*StringLabel(ruby, "class"), "String");
  EXPECT_EQ(StringLabel(ruby, "bytes"), nullptr) << "a numeric label";
}

}  // namespace
}  // namespace heaprec::analysis
