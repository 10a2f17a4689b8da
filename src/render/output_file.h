// Profiles written as files, through base's atomic writers (base/file_io.h, and
// base/recycling_writer.h for many files rewritten in place): the commands' other outputs (flame
// pages, charts) call base::WriteFileAtomically themselves.
#pragma once

#include <string>

#include "base/file_io.h"
#include "base/recycling_writer.h"
#include "profile/pprof_reader.h"
#include "profile/profile.h"

namespace heaprec::render {

// A file could not be written: the writer's error, under the name render's callers have caught
// since before base/ existed. what() is one line naming the path and the reason.
using OutputError = base::FileError;

// The profile, gzipped (profile/pprof_writer.h), written atomically to `path` (a 0600 file: a
// profile reveals program internals). Throws OutputError; `path` is left untouched on failure.
void WriteProfileFile(const profile::Profile& profile, const std::string& path);
// The same for a profile read by profile::ReadRewritableProfile.
void WriteProfileFile(const profile::RewritableProfile& profile, const std::string& path);
// The same, replacing one of many files rewritten in place (heaprec run's rewrite, heaprec
// symbolize): the replaced file's inode is kept for the next one instead of freed
// (base/recycling_writer.h).
void WriteProfileFile(const profile::RewritableProfile& profile, const std::string& path,
                      base::RecyclingWriter* writer);

}  // namespace heaprec::render
