#include "cli/run_summary.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report.h"
#include "cli/run_stories.h"
#include "profile/pprof_reader.h"
#include "render/format.h"
#include "render/report.h"
#include "schema/control.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {
namespace {

using profile::Profile;
using profile::Sample;

// How a process ended, for each reason the library gives its final profile; nullptr for the other
// reasons (interval, signal, api, peak, above), which a process writes while it runs.
const char* EndingOf(const std::string& reason) {
  if (reason == schema::kReasonExit) return "ended with exit() or a return from main";
  if (reason == schema::kReasonUnderscoreExit) return "ended with _exit()";
  if (reason == schema::kReasonCrash) return "crashed on a fatal signal";
  if (reason == schema::kReasonTerminated) return "was killed by a termination signal";
  if (reason == schema::kReasonKilled) return "was killed without warning (its heap at death)";
  return nullptr;
}

// The library's messages, each as a heaprec line.
void PrintMessages(const std::vector<std::string>& messages) {
  for (const std::string& message : messages) {
    std::cerr << (message.rfind("heaprec:", 0) == 0 ? "" : "heaprec: ") << message << "\n";
  }
}

// Up to this many profiles are listed one per line; beyond it (a build, a shell script: hundreds
// of processes) the program's own are listed and the rest summed up.
constexpr size_t kListedProfiles = 20;

void PrintProfileLine(const ManifestEntry& e) {
  std::cerr << "  " << e.path << "  (pid " << e.pid << ", " << e.reason;
  if (const char* ending = EndingOf(e.reason)) std::cerr << ": the process " << ending;
  std::cerr << ")\n";
}

// The profiles not listed, in one line: how many, from how many processes, by reason, and where.
void PrintProfileTally(const std::vector<ManifestEntry>& rest) {
  std::map<std::string, size_t> by_reason;
  std::set<pid_t> processes;
  std::set<std::string> directories;
  for (const ManifestEntry& e : rest) {
    ++by_reason[e.reason];
    processes.insert(e.pid);
    directories.insert(std::filesystem::path(e.path).parent_path().string());
  }
  std::cerr << "  and " << rest.size() << " more from " << processes.size()
            << (processes.size() == 1 ? " other process" : " other processes") << " (";
  const char* separator = "";
  for (const auto& [reason, count] : by_reason) {
    std::cerr << separator << count << " " << reason;
    separator = ", ";
  }
  std::cerr << ") in ";
  separator = "";
  for (const std::string& directory : directories) {
    std::cerr << separator << directory;
    separator = ", ";
  }
  std::cerr << "\n";
}

// A daemon the program started (it forked, the parent exited) runs on after the program: heaprec
// run does not wait for it (a build would wait for the compiler server it left), and says where
// its profiles go.
void PrintStillRunning(const std::vector<ManifestEntry>& running) {
  for (const ManifestEntry& entry : running) {
    std::ifstream comm("/proc/" + std::to_string(entry.pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    std::string directory = std::filesystem::path(entry.path).parent_path().string();
    std::cerr << "heaprec: process " << entry.pid << (name.empty() ? "" : " (" + name + ")")
              << " still runs, left behind by the program: it writes its profiles to "
              << (directory.empty() ? "." : directory) << " when it ends (heaprec dump "
              << entry.pid << " writes one now)\n";
  }
}

void PrintProfileList(const std::vector<ManifestEntry>& profiles, pid_t root) {
  std::cerr << "heaprec: wrote " << profiles.size()
            << (profiles.size() == 1 ? " profile" : " profiles") << ":\n";
  if (profiles.size() <= kListedProfiles) {
    for (const ManifestEntry& e : profiles) PrintProfileLine(e);
    return;
  }
  std::vector<ManifestEntry> rest;
  for (const ManifestEntry& e : profiles) {
    if (e.pid == root) {
      PrintProfileLine(e);
    } else {
      rest.push_back(e);
    }
  }
  PrintProfileTally(rest);
}

// The last profile of `pid` that `matches` the reason, or nullptr.
template <typename Predicate>
const ManifestEntry* LastProfileOf(const std::vector<ManifestEntry>& profiles, pid_t pid,
                                   Predicate matches) {
  const ManifestEntry* found = nullptr;
  for (const ManifestEntry& e : profiles) {
    if (e.pid == pid && matches(e.reason)) found = &e;
  }
  return found;
}

const ManifestEntry* FinalProfileOf(const std::vector<ManifestEntry>& profiles, pid_t pid) {
  return LastProfileOf(profiles, pid,
                       [](const std::string& reason) { return EndingOf(reason) != nullptr; });
}

// The live bytes a profile holds (its inuse_space, summed), or -1 if it has no such values.
std::int64_t InuseSpace(const Profile& profile) {
  for (size_t i = 0; i < profile.sample_types.size(); ++i) {
    if (profile.sample_types[i].type != schema::kInuseSpace) continue;
    std::int64_t total = 0;
    for (const Sample& sample : profile.samples) total += sample.values.at(i);
    return total;
  }
  return -1;
}

// A process that freed (nearly) everything before it ended (all RAII code does) leaves a final
// profile with little to show; what it held at its peak is in its peak profile, so say where to
// look. Returns that peak profile when the final one holds less than a tenth of it, else nullptr.
const ManifestEntry* PointAtPeakProfile(const std::vector<ManifestEntry>& profiles,
                                        const ManifestEntry& final_profile) {
  const ManifestEntry* peak =
      LastProfileOf(profiles, final_profile.pid,
                    [](const std::string& reason) { return reason == schema::kReasonPeak; });
  if (peak == nullptr) return nullptr;
  try {
    std::int64_t final_bytes = InuseSpace(profile::ReadProfileFile(final_profile.path));
    std::int64_t peak_bytes = InuseSpace(profile::ReadProfileFile(peak->path));
    if (final_bytes < 0 || peak_bytes <= 0 || final_bytes * 10 >= peak_bytes) return nullptr;
    std::cerr << "heaprec: the final profile of pid " << final_profile.pid << " holds "
              << render::FormatValue(final_bytes, schema::kBytesUnit) << "; its peak profile "
              << peak->path << " holds " << render::FormatValue(peak_bytes, schema::kBytesUnit)
              << "\n";
    return peak;
  } catch (const std::exception& error) {
    std::cerr << "heaprec: " << error.what() << "\n";
    return nullptr;
  }
}

// The most a process's profiles say it held: its peak profile's live bytes, else its final one's
// (-1 when neither can be read).
std::int64_t MostHeld(const std::vector<ManifestEntry>& profiles, pid_t pid) {
  const ManifestEntry* e = LastProfileOf(
      profiles, pid, [](const std::string& reason) { return reason == schema::kReasonPeak; });
  if (e == nullptr) e = FinalProfileOf(profiles, pid);
  if (e == nullptr) return -1;
  try {
    return InuseSpace(profile::ReadProfileFile(e->path));
  } catch (const std::exception&) {
    return -1;
  }
}

// The process whose summary tells the run's story: the program's own, unless its profiles hold
// nothing while other processes' do (a shell script, a wrapper that forks the real work): then the
// one of those that held the most at its peak, said in one line, rather than the program's empty
// profile and advice to lower the interval. Of many processes only the kCandidates largest peak
// (or final) profile files are read: reading every profile of a build would cost seconds. *said
// gets the line that says so ("" for the program itself).
pid_t SummarizedProcess(const std::vector<ManifestEntry>& profiles, pid_t root, std::string* said) {
  constexpr size_t kCandidates = 8;
  if (MostHeld(profiles, root) > 0) return root;
  std::map<pid_t, std::uintmax_t> largest_file;  // by pid: its largest peak or final profile file
  for (const ManifestEntry& e : profiles) {
    if (e.pid == root || (e.reason != schema::kReasonPeak && EndingOf(e.reason) == nullptr)) {
      continue;
    }
    std::error_code error;
    std::uintmax_t size = std::filesystem::file_size(e.path, error);
    if (!error) largest_file[e.pid] = std::max(largest_file[e.pid], size);
  }
  std::vector<std::pair<std::uintmax_t, pid_t>> by_size;
  for (const auto& [pid, size] : largest_file) by_size.push_back({size, pid});
  std::sort(by_size.rbegin(), by_size.rend());
  if (by_size.size() > kCandidates) by_size.resize(kCandidates);
  pid_t best = root;
  std::int64_t best_bytes = 0;
  for (const auto& [size, pid] : by_size) {
    std::int64_t held = MostHeld(profiles, pid);
    if (held > best_bytes) {
      best = pid;
      best_bytes = held;
    }
  }
  if (best != root) {
    *said = "heaprec: the program (pid " + std::to_string(root) + ") held nothing sampled; pid " +
            std::to_string(best) + ", of the " + std::to_string(largest_file.size() + 1) +
            " processes with profiles, held the most (" +
            render::FormatValue(best_bytes, schema::kBytesUnit) +
            " at its peak): its summary follows\n";
  }
  return best;
}

// The top sites of one of the program's profiles.
void PrintTopSites(const RunOptions& o, const ManifestEntry& summarized) {
  if (o.top == 0) return;
  try {
    Profile profile = profile::ReadProfileFile(summarized.path);
    render::ReportOptions report;
    report.source = summarized.path;
    report.top = o.top;
    std::cerr << "\n";
    render::PrintReport(analysis::ComputeReport(profile, schema::kInuseSpace), report, std::cerr);
  } catch (const std::exception& error) {
    std::cerr << "heaprec: " << error.what() << "\n";
  }
}

// `path` relative to the working directory when it is under it: a command to copy and paste.
std::string ShownPath(const std::string& path) {
  std::error_code error;
  const std::string cwd = std::filesystem::current_path(error).string() + "/";
  return !error && path.rfind(cwd, 0) == 0 ? path.substr(cwd.size()) : path;
}

// How to type this heaprec: "heaprec" when that is what $PATH finds, else its own path (relative
// to the working directory when under it: ../build/bin/heaprec from a checkout's out/).
std::string SelfCommand() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "heaprec";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const size_t colon = std::min(dirs.find(':'), dirs.size());
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(0, colon)) / "heaprec";
    if (std::filesystem::equivalent(candidate, self, error) && !error) return "heaprec";
    dirs.remove_prefix(std::min(colon + 1, dirs.size()));
  }
  const std::filesystem::path relative = std::filesystem::relative(self, error);
  return !error && !relative.empty() && relative.native().size() < self.native().size()
             ? relative.string()
             : self.string();
}

// The program's story (cli/run_stories.h) from its final and peak profiles, then what to try next.
void PrintStory(const RunOptions& o, const ManifestEntry& final_profile,
                const ManifestEntry* peak) {
  try {
    std::vector<Profile> profiles;
    profiles.push_back(profile::ReadProfileFile(final_profile.path));
    if (peak != nullptr) profiles.insert(profiles.begin(), profile::ReadProfileFile(peak->path));
    std::cerr << "\n";
    PrintStories(GroupByProcess(profiles), 1, o.top == 0 ? 0 : std::min<size_t>(o.top, 5),
                 std::cerr);
    const std::string shown = ShownPath(final_profile.path);
    const std::string heaprec = SelfCommand();
    std::cerr << "\nNext: " << heaprec << " report --lines " << shown
              << "   (every site, by line)\n"
              << "      " << heaprec << " flame " << shown << "   (a flame graph page)\n";
    if (peak != nullptr) {
      std::cerr << "      " << heaprec << " diff " << ShownPath(peak->path) << " " << shown
                << "   (what was freed after the peak)\n";
    }
  } catch (const std::exception& error) {
    std::cerr << "heaprec: " << error.what() << "\n";
  }
}

}  // namespace

void PrintSummary(const RunOptions& o, pid_t root, const Manifest& manifest, bool unprofiled) {
  PrintMessages(manifest.messages);
  PrintMessages(manifest.declined);
  PrintStillRunning(manifest.running);
  const std::vector<ManifestEntry>& profiles = manifest.profiles;
  if (profiles.empty()) {
    // The processes said why (a bad setting), or will write their profiles later: a guess at
    // another reason would mislead.
    if (!manifest.declined.empty() || !manifest.running.empty()) return;
    if (!manifest.unwritten.empty()) {
      std::cerr << "heaprec: no profile was written: " << manifest.unwritten.size()
                << (manifest.unwritten.size() == 1 ? " write" : " writes")
                << " failed (the processes said why above)\n";
      return;
    }
    // Profiles are written at exit, _exit, abort and fatal or terminating signals, and the peak
    // one as it grows: these are what is left.
    if (o.Has(schema::kDormantVariable)) {
      std::cerr << "heaprec: no profile was written (dormant, never attached)\n";
    } else if (o.ruby) {
      // Ruby processes write at their endings, their peak (after a second), a checkpoint every
      // minute, and on their interval and signal.
      std::cerr << "heaprec: no profile was written (was the program killed by SIGKILL before its "
                   "first peak or checkpoint profile, or is it not a Ruby program that loads "
                   "heaprec/autorun?)\n";
    } else if (!unprofiled) {
      std::cerr << "heaprec: no profile was written (was the program killed by SIGKILL before its "
                   "first peak profile, statically linked, or run with profiling turned off?)\n";
    }
    return;
  }
  PrintProfileList(profiles, root);
  std::string summarized_instead;  // with --top 0 no summary follows: nothing to choose
  const pid_t shown = o.top == 0 ? root : SummarizedProcess(profiles, root, &summarized_instead);
  // Reading every process's final and peak profiles would cost seconds in a build: with many
  // profiles, only the program's own get the pointer (and the summarized process's, below).
  for (const ManifestEntry& e : profiles) {
    bool listed = profiles.size() <= kListedProfiles || e.pid == root;
    if (listed && e.pid != root && e.pid != shown && EndingOf(e.reason) != nullptr) {
      PointAtPeakProfile(profiles, e);
    }
  }
  std::cerr << summarized_instead;
  // The program's own summary (or the process that held its memory: SummarizedProcess): its final
  // profile, or its peak one when that is where the memory was, or when the program was killed
  // before it could write a final one (SIGKILL, the OOM killer).
  const ManifestEntry* final_profile = FinalProfileOf(profiles, shown);
  const ManifestEntry* summarized = final_profile;
  if (final_profile == nullptr) {
    summarized = LastProfileOf(
        profiles, shown, [](const std::string& reason) { return reason == schema::kReasonPeak; });
  } else if (const ManifestEntry* peak = PointAtPeakProfile(profiles, *final_profile)) {
    summarized = peak;
  }
  if (summarized != nullptr) PrintTopSites(o, *summarized);
  if (final_profile != nullptr && o.top != 0) {
    PrintStory(o, *final_profile, LastProfileOf(profiles, shown, [](const std::string& reason) {
                 return reason == schema::kReasonPeak;
               }));
  }
}

}  // namespace heaprec::cli
