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

// The files of one side: a directory's profiles (CollectProfileFiles), a file as named (the reader
// says what is wrong with one that is missing or is not a profile); each process's last.
std::vector<ReadFile> ReadSide(const std::vector<std::string>& args, const std::string& command) {
  std::vector<ReadFile> files;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      files.push_back({arg, false, profile::ReadProfileFile(arg)});
      continue;
    }
    for (std::string& path : CollectProfileFiles({arg})) {
      files.push_back({path, true, profile::ReadProfileFile(path)});
    }
  }
  if (size_t left_out = KeepLastProfileOfEachProcess(files); left_out > 0) {
    std::cerr << "heaprec " << command << ": merging each process's last profile; " << left_out
              << " earlier or peak profile" << (left_out == 1 ? "" : "s")
              << " of the same processes left out\n";
  }
  return files;
}

}  // namespace

std::vector<ProfileInputs> LoadProfileInputSides(const std::vector<std::vector<std::string>>& sides,
                                                 DisplayReading reading,
                                                 const SymbolSearchArgs& symbols) {
  std::vector<std::string> paths;
  std::vector<profile::Profile> profiles;
  std::vector<size_t> side_sizes;
  for (const std::vector<std::string>& args : sides) {
    std::vector<ReadFile> files = ReadSide(args, reading.command);
    std::vector<profile::Profile> side;
    std::vector<std::string> side_paths;
    for (ReadFile& f : files) {
      side_paths.push_back(f.path);
      side.push_back(std::move(f.profile));
    }
    profile::CheckMergeable(side, side_paths);
    side_sizes.push_back(side.size());
    for (size_t i = 0; i < side.size(); ++i) {
      paths.push_back(side_paths[i]);
      profiles.push_back(std::move(side[i]));
    }
  }
  reading.one_line = reading.one_line || profiles.size() > sides.size();
  PrepareForDisplay(profiles, paths, reading, symbols);
  std::vector<ProfileInputs> result;
  size_t next = 0;
  for (size_t s = 0; s < sides.size(); ++s) {
    ProfileInputs in;
    std::vector<profile::Profile> side;
    std::vector<std::string> side_paths;
    for (size_t i = 0; i < side_sizes[s]; ++i, ++next) {
      ProfileInput input{.path = paths[next], .pid = analysis::ProfilePid(profiles[next])};
      if (!profiles[next].mappings.empty()) {
        input.program = analysis::BaseName(profiles[next].mappings.front().filename);
      }
      input.profile = profiles[next];
      in.inputs.push_back(std::move(input));
      side.push_back(std::move(profiles[next]));
      side_paths.push_back(paths[next]);
    }
    in.merged = profile::MergeProfiles(std::move(side), side_paths);
    in.source = DescribeSource(sides[s], in.inputs.size());
    result.push_back(std::move(in));
  }
  return result;
}

ProfileInputs LoadProfileInputs(const std::vector<std::string>& args, DisplayReading reading,
                                const SymbolSearchArgs& symbols) {
  return std::move(LoadProfileInputSides({args}, std::move(reading), symbols).front());
}

std::string InputLabel(const ProfileInput& input) {
  if (!input.pid) return analysis::BaseName(input.path);
  std::string label = "pid " + std::to_string(*input.pid);
  if (!input.program.empty()) label += " (" + input.program + ")";
  return label;
}

}  // namespace heaprec::cli
