// Where the files of one binary named by a profile's mapping are looked for, in this order (the
// README's "Symbolization" section):
//
//  1. the path the profile recorded (not for a deleted file without a build id: whatever is at
//     that path now cannot be told apart from it);
//  2. each binary path, as pprof searches PPROF_BINARY_PATH: DIR/<build-id>/<name>, any file in
//     DIR/<build-id>/, DIR/<path>/<build-id>, DIR/<name>, DIR/<path>; also when step 1 found a
//     stripped file (no DWARF) and the build id is known: a file there with that build id and
//     DWARF (its unstripped build) is taken in its place;
//  3. when no binary was found, or the one found has no DWARF of its own (it was stripped): a
//     separate debug file, as GDB looks for one: beside the binary (its .gnu_debuglink name, also
//     in .debug/), then in each debug path DIR/.build-id/xx/rest.debug and DIR/<dir>/<debuglink
//     name> (DIR/<path>.debug when the binary is not there to give its debuglink name);
//  4. when the build id is known and nothing local has the DWARF: debuginfod, for the debug file,
//     and for the executable itself when neither it nor a debug file was found.
//
// At every step a file whose GNU build id is not the recorded one is refused (another build of
// the program: its addresses would name the wrong code); without a recorded build id, a binary is
// taken as found, and a debug file only when its CRC is the one the binary's .gnu_debuglink names.
#pragma once

#include <string>
#include <vector>

#include "symbolize/debuginfod.h"

namespace heaprec::symbolize {

struct SearchPaths {
  std::vector<std::string> binary_paths{};
  std::vector<std::string> debug_paths{};
};

struct FoundFiles {
  std::string binary;  // the ELF file with the code, "" when none was found
  std::string debug;   // a separate file with the DWARF, "" when the binary has its own or none
  bool other_build = false;       // a file was refused for its build id
  bool binary_has_dwarf = false;  // `binary` has DWARF of its own (then `debug` is "")
  // Where the files were looked for and not found, for messages: each place once, with why a
  // file there was not used when it was there. Once the binary is found, only where its debug
  // file (or its unstripped build) was looked for: each binary path is named.
  std::vector<std::string> looked_in;
};

// `recorded_path` as the mapping names it (" (deleted)" included), `build_id` lowercase hex or "".
FoundFiles FindFiles(const std::string& recorded_path, const std::string& build_id,
                     const SearchPaths& paths, DebuginfodClient& debuginfod);

}  // namespace heaprec::symbolize
