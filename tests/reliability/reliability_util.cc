#include "reliability_util.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "profile/pprof_reader.h"
#include "schema/profile_schema.h"

namespace heaprec::reliability {

using namespace ::heaprec::profile;

RunResult RunGuarded(const std::vector<std::string>& argv, const std::string& cwd,
                     const EnvChanges& env, int timeout_s) {
  return e2e::RunProgram(argv, cwd, env, timeout_s);
}

RunResult HeaprecRunGuarded(const std::string& dir, const std::vector<std::string>& flags,
                            const std::vector<std::string>& program, const EnvChanges& env,
                            int timeout_s) {
  return RunGuarded(e2e::HeaprecArgv(dir, flags, program), dir, env, timeout_s);
}

RunResult PreloadRunGuarded(const std::string& dir, const std::vector<std::string>& program,
                            const EnvChanges& env, int timeout_s) {
  EnvChanges all = {{"LD_PRELOAD", HEAPREC_LIB}, {"HEAPREC_OUTPUT", dir + "/p.%p.pb.gz"}};
  for (const auto& [name, value] : env) all[name] = value;
  return RunGuarded(program, dir, all, timeout_s);
}

std::string WithoutHeaprecLines(const std::string& text) {
  std::string kept;
  for (const std::string& line : Lines(text)) {
    if (line.rfind("heaprec: wrote ", 0) == 0 ||
        line.rfind("heaprec: no profile was written", 0) == 0) {
      break;
    }
    if (line.rfind("heaprec", 0) == 0) continue;
    kept += line + "\n";
  }
  return kept;
}

bool IsFinalReason(const std::string& reason) { return schema::IsFinalReason(reason); }

int ProfileSet::Count(const std::string& reason) const {
  int n = 0;
  for (const ProfileFile& f : files) n += f.reason == reason;
  return n;
}

const Profile& ProfileSet::ExitProfile(int64_t pid) const {
  auto it = exit_profiles.find(pid);
  if (it == exit_profiles.end()) {
    ADD_FAILURE() << "no exit profile for pid " << pid;
    throw std::runtime_error("no exit profile for pid " + std::to_string(pid));
  }
  return files[it->second].profile;
}

std::optional<ProfileFile> ReadValidProfile(const std::string& path) {
  ProfileFile file;
  file.path = path;
  try {
    file.profile = ReadProfileFile(path);
  } catch (const std::exception& error) {
    ADD_FAILURE() << path << " is not a valid profile: " << error.what();
    return std::nullopt;
  }
  file.pid = CommentValue(file.profile, "pid");
  return file;
}

ProfileSet ReadProfiles(const std::string& dir) {
  ProfileSet set;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << "temporary file left behind: " << name;
  }
  for (const std::string& path : e2e::ListProfiles(dir)) {
    std::optional<ProfileFile> valid = ReadValidProfile(path);
    if (!valid) continue;
    ProfileFile& file = *valid;
    file.reason = e2e::CommentText(file.profile, "reason");
    EXPECT_EQ(e2e::CommentValues(file.profile, "pid").size(), 1u) << path;
    EXPECT_EQ(e2e::CommentValues(file.profile, "reason").size(), 1u) << path;
    // The tool's version opens the first comment, and only that one.
    EXPECT_EQ(file.profile.comments.empty() ? std::string::npos
                                            : file.profile.comments[0].rfind("heaprec ", 0),
              0u)
        << path;
    EXPECT_EQ(std::count_if(file.profile.comments.begin(), file.profile.comments.end(),
                            [](const std::string& c) { return c.rfind("heaprec ", 0) == 0; }),
              1)
        << path;
    EXPECT_GT(file.pid, 0) << path;
    ++set.all_files;
    if (file.reason == "peak") {
      std::string base = path.substr(path.rfind('/') + 1);
      if (base.rfind("p.", 0) == 0) {
        EXPECT_EQ(base.rfind("p." + std::to_string(file.pid) + ".", 0), 0u) << path;
      }
      set.peak_files.push_back(std::move(file));
    } else {
      set.files.push_back(std::move(file));
    }
  }
  for (size_t i = 0; i < set.files.size(); ++i) {
    const ProfileFile& file = set.files[i];
    std::string base = file.path.substr(file.path.rfind('/') + 1);
    if (IsFinalReason(file.reason)) {
      // Files named by the tests' usual template p.%p.pb.gz must carry their own pid.
      if (base.rfind("p.", 0) == 0) {
        EXPECT_EQ(base, "p." + std::to_string(file.pid) + ".pb.gz") << file.path;
      }
      EXPECT_EQ(set.final_profiles.count(file.pid), 0u)
          << "two final profiles for pid " << file.pid;
      set.final_profiles[file.pid] = i;
      if (file.reason == "exit") set.exit_profiles[file.pid] = i;
    } else if (base.rfind("p.", 0) == 0) {
      EXPECT_EQ(base.rfind("p." + std::to_string(file.pid) + ".", 0), 0u) << file.path;
    }
  }
  return set;
}

std::vector<ProfileFile> ReadPeakProfiles(const std::string& dir) {
  std::vector<ProfileFile> peaks;
  for (const std::string& path : e2e::ListProfiles(dir, true)) {
    std::optional<ProfileFile> valid = ReadValidProfile(path);
    if (!valid) continue;
    ProfileFile& file = *valid;
    file.reason = CommentText(file.profile, "reason");
    EXPECT_EQ(file.reason, "peak") << path;
    EXPECT_EQ(path, dir + "/p." + std::to_string(file.pid) + ".peak.pb.gz");
    peaks.push_back(std::move(file));
  }
  return peaks;
}

std::string Describe(const RunResult& run) {
  std::ostringstream text;
  text << "status " << run.status << (run.status == kHung ? " (HUNG: killed by the guard)" : "")
       << "\n--- stdout (" << run.out.size() << " bytes) ---\n"
       << run.out.substr(0, 2000) << "\n--- stderr (" << run.err.size() << " bytes) ---\n"
       << run.err.substr(0, 4000);
  return text.str();
}

Values SiteValuesOfSize(const Profile& profile, const std::string& function, int64_t size) {
  int index[4] = {-1, -1, -1, -1};
  const char* names[4] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
  for (size_t i = 0; i < profile.sample_types.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      if (profile.sample_types[i].type == names[k]) index[k] = static_cast<int>(i);
    }
  }
  Values total;
  for (const Sample& s : profile.samples) {
    bool match = false;
    for (const Label& label : s.labels) match |= label.key == "bytes" && label.num == size;
    if (!match || (!function.empty() && !e2e::StackHas(profile, s, function))) continue;
    total.alloc_objects += s.values.at(index[0]);
    total.alloc_space += s.values.at(index[1]);
    total.inuse_objects += s.values.at(index[2]);
    total.inuse_space += s.values.at(index[3]);
  }
  return total;
}

size_t MaxStackDepth(const Profile& profile) {
  size_t depth = 0;
  for (const Sample& s : profile.samples) depth = std::max(depth, s.location_ids.size());
  return depth;
}

void CopyFile(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

RunResult ReliabilityTest::CompareWithHeaprec(const std::vector<std::string>& flags,
                                              const std::vector<std::string>& program, int status,
                                              int timeout_s, const EnvChanges& env) {
  std::string plain_dir = dir_ / "plain";
  std::filesystem::create_directories(plain_dir);
  RunResult plain = RunGuarded(program, plain_dir, env, timeout_s);
  EXPECT_NE(plain.status, kHung) << "unprofiled run hung\n" << Describe(plain);
  EXPECT_EQ(plain.status, status) << "unprofiled run\n" << Describe(plain);
  RunResult profiled = HeaprecRunGuarded(dir_.path(), flags, program, env, timeout_s);
  EXPECT_NE(profiled.status, kHung) << "profiled run hung\n" << Describe(profiled);
  EXPECT_EQ(profiled.status, status) << "profiled run\n" << Describe(profiled);
  EXPECT_EQ(profiled.out, plain.out) << "profiling changed the program's stdout";
  EXPECT_EQ(WithoutHeaprecLines(profiled.err), plain.err)
      << "profiling changed the program's stderr\n"
      << Describe(profiled);
  return profiled;
}

RunResult ReliabilityTest::CompareWithPreload(const EnvChanges& env,
                                              const std::vector<std::string>& program, int status,
                                              int timeout_s) {
  std::string plain_dir = dir_ / "plain";
  std::filesystem::create_directories(plain_dir);
  RunResult plain = RunGuarded(program, plain_dir, {}, timeout_s);
  EXPECT_NE(plain.status, kHung) << "unprofiled run hung\n" << Describe(plain);
  EXPECT_EQ(plain.status, status) << "unprofiled run\n" << Describe(plain);
  RunResult profiled = PreloadRunGuarded(dir_.path(), program, env, timeout_s);
  EXPECT_NE(profiled.status, kHung) << "profiled run hung\n" << Describe(profiled);
  EXPECT_EQ(profiled.status, status) << "profiled run\n" << Describe(profiled);
  EXPECT_EQ(profiled.out, plain.out) << "profiling changed the program's stdout";
  EXPECT_EQ(profiled.err, plain.err) << "profiling changed the program's stderr";
  return profiled;
}

}  // namespace heaprec::reliability
