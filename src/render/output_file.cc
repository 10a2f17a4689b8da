#include "render/output_file.h"

#include "profile/pprof_writer.h"

namespace heaprec::render {

void WriteProfileFile(const profile::Profile& profile, const std::string& path) {
  base::WriteFileAtomically(path, profile::EncodeProfile(profile, /*gzip=*/true));
}

void WriteProfileFile(const profile::RewritableProfile& profile, const std::string& path) {
  base::WriteFileAtomically(path, profile::EncodeProfile(profile, /*gzip=*/true));
}

void WriteProfileFile(const profile::RewritableProfile& profile, const std::string& path,
                      base::RecyclingWriter* writer) {
  writer->Write(path, profile::EncodeProfile(profile, /*gzip=*/true));
}

}  // namespace heaprec::render
