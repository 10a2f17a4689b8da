// Profile file names on the CLI side: which files are profiles, the profiles a list of files and
// directories names, and the names of what is made from a profile.
#pragma once

#include <string>
#include <vector>

namespace heaprec::cli {

// Whether `name` ends in .pb.gz or .pb (schema/profile_schema.h).
bool IsProfileFileName(const std::string& name);

// The files named, with every profile (IsProfileFileName) of the directories named, each
// directory's sorted by name. Throws std::runtime_error for a missing path or a directory without
// profiles.
std::vector<std::string> CollectProfileFiles(const std::vector<std::string>& paths);

// FILE without its .pb.gz (or .pb, or .gz) suffix, plus `extension` (".html"), in FILE's directory.
std::string DerivedFileName(const std::string& file, const std::string& extension);

}  // namespace heaprec::cli
