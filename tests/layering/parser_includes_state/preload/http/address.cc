// A parser of untrusted text that reaches into the library's shared state: allowed for preload's
// other files, refused for the parsers, which the heaprec command and the fuzzers compile too.
#include "preload/http/address.h"

#include "core/appender.h"
#include "preload/state.h"
