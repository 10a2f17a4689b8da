// A loopback HTTP server for one page (`heaprec ui` without -o): GET / answers with the page, any
// other path with 404. Serves one connection at a time until SIGINT or SIGTERM, then returns.
// Loopback only: the page holds the program's code and data sizes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace heaprec::cli {

// Binds 127.0.0.1:`port` (0: any free port), calls `ready` with the URL, serves `page` until
// SIGINT or SIGTERM. Throws std::runtime_error when it cannot listen.
void ServePage(const std::string& page, uint16_t port,
               const std::function<void(const std::string& url)>& ready);

}  // namespace heaprec::cli
