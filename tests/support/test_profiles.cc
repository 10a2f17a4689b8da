// Construction of the shared test profiles and small process helpers.
#include "test_profiles.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>

#include "profile/pprof_writer.h"

namespace heaprec::test_support {

Profile MakeNativeHeapProfile(int64_t period) {
  Profile p;
  p.sample_types = {{"alloc_objects", "count"},
                    {"alloc_space", "bytes"},
                    {"inuse_objects", "count"},
                    {"inuse_space", "bytes"}};
  p.period_type = {"space", "bytes"};
  p.period = period;
  p.default_sample_type = "inuse_space";
  return p;
}

Profile MakeFullProfile() {
  Profile p;
  p.sample_types = {{"alloc_objects", "count"},
                    {"alloc_space", "bytes"},
                    {"inuse_objects", "count"},
                    {"inuse_space", "bytes"}};
  p.mappings = {
      {.id = 1,
       .memory_start = 0x555555554000,
       .memory_limit = 0x555555556000,
       .file_offset = 0x1000,
       .filename = "/usr/bin/app",
       .build_id = "0123456789abcdef",
       .has_functions = true,
       .has_filenames = true,
       .has_line_numbers = true,
       .has_inline_frames = true},
      {.id = 7, .memory_start = 0x7fff0000, .memory_limit = 0x7fff2000, .filename = "[vdso]"},
  };
  p.functions = {
      {.id = 1,
       .name = "ns::Widget::Build(int)",
       .system_name = "_ZN2ns6Widget5BuildEi",
       .filename = "/src/widget.cc",
       .start_line = 42},
      {.id = 3, .name = "main", .system_name = "main", .filename = "/src/main.cc", .start_line = 5},
  };
  p.locations = {
      {.id = 1, .mapping_id = 1, .address = 0x555555554abc, .lines = {{1, 44}, {3, 9}}},
      {.id = 2, .mapping_id = 7, .address = 0x7fff0123},
      {.id = 9, .mapping_id = 0, .address = 0xdeadbeef, .is_folded = true},
  };
  p.samples = {
      {.location_ids = {1, 2},
       .values = {1, 524288, 1, 524288},
       .labels = {{.key = "bytes", .num = 4096, .num_unit = "bytes"}}},
      {.location_ids = {9},
       .values = {-3, -1, 0, 1LL << 40},
       .labels = {{.key = "thread", .str = "wörker \"1\""}}},
      {.location_ids = {}, .values = {0, 0, 0, 0}},
  };
  p.drop_frames = "^malloc$";
  p.keep_frames = "^keep";
  p.time_nanos = 1700000000123456789;
  p.duration_nanos = 2500000000;
  p.period_type = {"space", "bytes"};
  p.period = 524288;
  p.comments = {"heaprec " HEAPREC_VERSION " pid=4242 reason=exit sample_interval=524288",
                "samples=123 dropped=0"};
  p.default_sample_type = "inuse_space";
  return p;
}

Profile MakeReportProfile() {
  Profile p = MakeNativeHeapProfile(524288);
  p.comments = {"heaprec " HEAPREC_VERSION " sample_interval=524288"};
  p.mappings = {
      {.id = 1, .memory_start = 0x400000, .memory_limit = 0x500000, .filename = "/opt/app/bin/app"},
      {.id = 2, .memory_start = 0x1000, .memory_limit = 0x2000, .filename = "/usr/lib/libfoo.so"}};
  p.functions = {
      {.id = 1,
       .name = "main",
       .system_name = "main",
       .filename = "/src/main.cc",
       .start_line = 10},
      {.id = 2,
       .name = "ns::Build(int)",
       .system_name = "_ZN2ns5BuildEi",
       .filename = "/src/build.cc",
       .start_line = 20},
      {.id = 3,
       .name = "ns::Inner()",
       .system_name = "_ZN2ns5InnerEv",
       .filename = "/src/inner.h",
       .start_line = 30},
      {.id = 4,
       .name = "Alloc",
       .system_name = "Alloc",
       .filename = "/src/alloc.cc",
       .start_line = 40},
  };
  p.locations = {
      {.id = 1, .mapping_id = 1, .address = 0x401000, .lines = {{4, 41}}},
      {.id = 2, .mapping_id = 1, .address = 0x402000, .lines = {{3, 31}, {2, 22}}},
      {.id = 3, .mapping_id = 1, .address = 0x403000, .lines = {{1, 11}}},
      {.id = 4, .mapping_id = 2, .address = 0x1234},
  };
  constexpr int64_t kMiB = 1 << 20;
  p.samples = {
      {.location_ids = {1, 2, 3}, .values = {3, 3 * kMiB, 3, 3 * kMiB}},
      {.location_ids = {2, 3}, .values = {1, kMiB, 1, kMiB}},
      {.location_ids = {4, 3}, .values = {7, kMiB / 2, 7, kMiB / 2}},
      {.location_ids = {3, 3}, .values = {2, kMiB / 2, 2, kMiB / 2}},
  };
  return p;
}

Profile MakeRubyProfile(int64_t sample_every) {
  Profile p;
  p.sample_types = {{"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  p.period_type = {"objects", "count"};
  p.period = sample_every;
  p.default_sample_type = "inuse_space";
  p.time_nanos = 1700000000000000000;
  p.duration_nanos = 3000000000;
  p.comments = {"heaprec " HEAPREC_VERSION " ruby front end (objects) sample_every=" +
                std::to_string(sample_every)};
  // As the Ruby front end writes them: name = system_name, no start line; "" for C methods.
  auto function = [](uint64_t id, const char* name, const char* file) {
    return Function{.id = id, .name = name, .system_name = name, .filename = file};
  };
  p.functions = {
      function(1, "<main>", "/app/app.rb"), function(2, "Cache#fill", "/app/lib/cache.rb"),
      function(3, "block in Cache#fill", "/app/lib/cache.rb"), function(4, "Integer#times", "")};
  p.locations = {{.id = 1, .lines = {{3, 12}}}, {.id = 2, .lines = {{4, 0}}},
                 {.id = 3, .lines = {{2, 11}}}, {.id = 4, .lines = {{1, 5}}},
                 {.id = 5, .lines = {{2, 15}}}, {.id = 6, .lines = {{1, 7}}}};
  auto sample = [&](std::vector<uint64_t> stack, int64_t objects, int64_t size,
                    const char* class_name, int64_t age) {
    return Sample{.location_ids = std::move(stack),
                  .values = {objects, objects * size},
                  .labels = {{.key = "bytes", .num = size, .num_unit = "bytes"},
                             {.key = "class", .str = class_name},
                             {.key = "gc_age", .num = age, .num_unit = "gc_cycles"},
                             {.key = "age_ns", .num = 2000000000, .num_unit = "nanoseconds"}}};
  };
  p.samples = {sample({1, 2, 3, 4}, 3 * sample_every, 40, "String", 2),
               sample({5, 4}, 2 * sample_every, 60, "Array", 5),
               sample({6}, 1 * sample_every, 1000, "Hash", 1),
               sample({1, 2, 3, 4}, 1 * sample_every, 40, "Symbol", 9)};
  return p;
}

Profile MakeGoCpuProfile() {
  Profile p;
  p.sample_types = {{"samples", "count"}, {"cpu", "nanoseconds"}};
  p.period_type = {"cpu", "nanoseconds"};
  p.period = 10000000;
  p.functions = {{.id = 1, .name = "main.spin", .system_name = "main.spin", .filename = "spin.go"}};
  p.locations = {{.id = 1, .address = 0x45a1b0, .lines = {{.function_id = 1, .line = 7}}}};
  p.samples = {{.location_ids = {1}, .values = {3, 30000000}}};
  return p;
}

void WriteEncodedProfile(const Profile& profile, const std::string& path, bool gzip) {
  std::string bytes = EncodeProfile(profile, gzip);
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) {
    ADD_FAILURE() << "cannot write " << path;
    return;
  }
  if (fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) ADD_FAILURE() << "short write";
  if (fclose(f) != 0) ADD_FAILURE() << "cannot close " << path;
}

std::string MakeTempDir() {
  std::string pattern = ::testing::TempDir() + "heaprec_test_XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  return pattern;
}

int ReadJsonWithPython(const std::string& json, const std::string& script, std::string* output) {
  std::string path = MakeTempDir() + "/document.json";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    ADD_FAILURE() << "cannot write " << path;
    return -1;
  }
  std::fputs(json.c_str(), f);
  std::fclose(f);
  return RunCommand("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); " + script +
                        "' " + ShellQuote(path),
                    output);
}

int RunCommand(const std::string& command, std::string* output) {
  // heaprec's commands ask the servers of DEBUGINFOD_URLS for what they cannot find: the tests
  // never reach out to a server they did not start.
  unsetenv("DEBUGINFOD_URLS");
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace heaprec::test_support
