#include "cli/profile_files.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "schema/profile_schema.h"

namespace heaprec::cli {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool IsProfileFileName(const std::string& name) {
  return EndsWith(name, schema::kProfileSuffix) || EndsWith(name, schema::kRawProfileSuffix);
}

std::vector<std::string> CollectProfileFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        std::error_code ignored;
        if (entry.is_regular_file(ignored) && IsProfileFileName(entry.path().filename().string())) {
          found.push_back(entry.path().string());
        }
      }
      if (ec) throw std::runtime_error(path + ": " + ec.message());
      if (found.empty()) {
        throw std::runtime_error(path + ": no profiles (*" + schema::kProfileSuffix + ", *" +
                                 schema::kRawProfileSuffix + ")");
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::exists(path, ec)) {
      files.push_back(path);
    } else {
      throw std::runtime_error(path + ": no such file or directory");
    }
  }
  return files;
}

std::string DerivedFileName(const std::string& file, const std::string& extension) {
  std::string base = file;
  for (const char* suffix : {".gz", schema::kRawProfileSuffix}) {
    if (EndsWith(base, suffix)) base.resize(base.size() - std::string(suffix).size());
  }
  return base + extension;
}

}  // namespace heaprec::cli
