// `heaprec run`'s symbolization: every profile its processes wrote gets the names, files and lines
// of its frames, in place, from one Symbolizer (the processes of a run share most of their
// binaries, whose symbols it keeps).
//
// A build's hundreds of processes each leave a profile or two. Rewriting them all after the
// program (read, symbolize, write) kept the user waiting, so the profiles of a process are
// rewritten as soon as the process is gone, while the program still runs: by one thread at the
// lowest priority (nice 19), on cores the program leaves idle (make -j2 keeps two cores about 60%
// busy). What is left, or was written again since, is done at the end on every core.
//
//   during the run    follow the manifest; a process that wrote its final profile and is gone
//                     (no /proc entry, or a zombie) has written its last file: rewrite its files
//   at the end        every profile not rewritten yet, or whose file is no longer the one written
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/run_manifest.h"

namespace heaprec::cli {

class RunSymbolizer {
 public:
  explicit RunSymbolizer(bool symbol_cache);
  ~RunSymbolizer();
  RunSymbolizer(const RunSymbolizer&) = delete;
  RunSymbolizer& operator=(const RunSymbolizer&) = delete;

  // Starts rewriting the files of ended processes as `manifest` lists them, in the background.
  void Follow(const std::string& manifest);
  // The program has ended: stops following once the file in hand is done. Before the manifest
  // goes.
  void StopFollowing();

  // Symbolizes every entry not done already, on every core; says what could not be done and which
  // binaries were missing. False if a profile could not be processed.
  bool Finish(const std::vector<ManifestEntry>& entries);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace heaprec::cli
