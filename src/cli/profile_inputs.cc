#include "cli/profile_inputs.h"

#include <filesystem>
#include <iostream>
#include <map>
#include <system_error>

#include "analysis/profile_view.h"
#include "cli/profile_files.h"
#include "profile/merge.h"
#include "profile/pprof_reader.h"

namespace heaprec::cli {
namespace {

struct ReadFile {
  std::string path;
  bool from_directory = false;
  profile::Profile profile;
};

// Whether `candidate` is a better "last profile of its process" than `kept`: a final profile over
// any other, then a dump over a peak, then the later one.
bool IsLaterProfile(const profile::Profile& candidate, const profile::Profile& kept) {
  auto rank = [](const profile::Profile& p) {
    return analysis::IsFinalProfile(p) ? 2 : analysis::IsPeakProfile(p) ? 0 : 1;
  };
  if (rank(candidate) != rank(kept)) return rank(candidate) > rank(kept);
  return candidate.time_nanos > kept.time_nanos;
}

// Of the profiles found in directories, each process's last one (see profile_inputs.h); returns
// how many were left out.
size_t KeepLastProfileOfEachProcess(std::vector<ReadFile>& files) {
  std::map<int64_t, size_t> last;  // pid -> index in files
  for (size_t i = 0; i < files.size(); ++i) {
    std::optional<int64_t> pid = analysis::ProfilePid(files[i].profile);
    if (!files[i].from_directory || !pid) continue;
    auto [it, inserted] = last.try_emplace(*pid, i);
    if (!inserted && IsLaterProfile(files[i].profile, files[it->second].profile)) it->second = i;
  }
  std::vector<ReadFile> kept;
  for (size_t i = 0; i < files.size(); ++i) {
    std::optional<int64_t> pid = analysis::ProfilePid(files[i].profile);
    if (files[i].from_directory && pid && last[*pid] != i) continue;
    kept.push_back(std::move(files[i]));
  }
  size_t left_out = files.size() - kept.size();
  files = std::move(kept);
  return left_out;
}

std::string DescribeSource(const std::vector<std::string>& args, size_t count) {
  if (count == 1 && args.size() == 1) return args.front();
  std::string joined;
  for (const std::string& arg : args) joined += (joined.empty() ? "" : " ") + arg;
  return std::to_string(count) + " profiles merged (" + joined + ")";
}

}  // namespace

ProfileInputs LoadProfileInputs(const std::vector<std::string>& args, DisplayReading reading,
                                const SymbolSearchArgs& symbols) {
  std::vector<ReadFile> files;
  for (const std::string& arg : args) {
    std::error_code ec;
    bool directory = std::filesystem::is_directory(arg, ec);
    for (std::string& path : CollectProfileFiles({arg})) {
      files.push_back({path, directory, profile::ReadProfileFile(path)});
    }
  }
  if (size_t left_out = KeepLastProfileOfEachProcess(files); left_out > 0) {
    std::cerr << "heaprec " << reading.command << ": merging each process's last profile; "
              << left_out << " earlier or peak profile" << (left_out == 1 ? "" : "s")
              << " of the same processes left out\n";
  }
  ProfileInputs result;
  std::vector<std::string> paths;
  std::vector<profile::Profile> profiles;
  for (ReadFile& f : files) {
    paths.push_back(f.path);
    profiles.push_back(std::move(f.profile));
  }
  reading.merged = true;
  reading.one_line = reading.one_line || profiles.size() > 1;
  PrepareForDisplay(profiles, paths, reading, symbols);
  for (size_t i = 0; i < profiles.size(); ++i) {
    ProfileInput input{.path = paths[i], .pid = analysis::ProfilePid(profiles[i])};
    if (!profiles[i].mappings.empty()) {
      input.program = analysis::BaseName(profiles[i].mappings.front().filename);
    }
    input.profile = profiles[i];
    result.inputs.push_back(std::move(input));
  }
  result.merged = profile::MergeProfiles(std::move(profiles), paths);
  result.source = DescribeSource(args, result.inputs.size());
  return result;
}

std::string InputLabel(const ProfileInput& input) {
  if (!input.pid) return analysis::BaseName(input.path);
  std::string label = "pid " + std::to_string(*input.pid);
  if (!input.program.empty()) label += " (" + input.program + ")";
  return label;
}

}  // namespace heaprec::cli
