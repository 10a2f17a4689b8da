// The pull endpoint: with HEAPREC_HTTP set, the profiled process serves GET /debug/pprof/heap, a
// fresh heap profile (gzipped pprof, reason=http), as a Go program with net/http/pprof does, so
// that `go tool pprof http://HOST:PORT/debug/pprof/heap`, Parca's agent and Grafana Alloy's
// pyroscope.scrape collect it. See docs/design/http-endpoint.md.
//
// One thread (blocking every signal, like the dump thread) accepts one connection at a time; the
// request head goes into a fixed 8 KiB buffer and is parsed by request.h. The listening
// socket is a descriptor above 2, close-on-exec, that the program can see in /proc/self/fd.
//
// Only the process that read HEAPREC_HTTP at start-up serves, and the programs it becomes by exec:
// the variable is taken out of the environment at start-up (so that fork-and-exec children,
// posix_spawn and system() do not try the same address) and put back by the exec hooks when the
// serving process itself calls exec. A fork child closes its copy of the socket.
#pragma once

#include <cstddef>

namespace heaprec::preload {

// Start-up, after the recorder is published: binds HEAPREC_HTTP's address and starts the thread.
// Any failure is one line on stderr; the program runs on, profiled, without the endpoint.
void StartHttpServerIfConfigured();

// A later `heaprec attach --http ADDR` (after a detach): serves on ADDR (HEAPREC_HTTP's forms;
// `is_public` as HEAPREC_HTTP_PUBLIC), unless a server runs already.
void StartHttpServerAt(const char* value, bool is_public);

// `heaprec detach` of a process heaprec attach loaded heaprec into: stops serving; the thread
// closes the listening socket once its answer in progress, if any, is sent, so that the program's
// descriptor table is its own again (attach.md).
void StopHttpServer();

// The child after fork(): closes the inherited sockets; the child does not serve.
void CloseHttpServerInChild();

// The exit profile is written: stops accepting and removes a Unix socket's file.
void StopHttpServerAtExit();

// For exec from the serving process: the variables to put back into the new program's environment
// (at most 2 written to `variables`), or 0 when the caller is not the serving process or `envp`
// already has HEAPREC_HTTP.
std::size_t HttpVariablesForExec(char* const* envp, const char** variables);

}  // namespace heaprec::preload
