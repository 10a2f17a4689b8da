// The dormant Ruby process's end of `heaprec attach` and `heaprec detach` (docs/design/ruby.md,
// "Dormant"): the dump signal, read with its sigqueue value as the native library reads it
// (schema/control.h). Ruby's Signal.trap gives a handler only the signal's number, so the
// extension installs the handler itself; it only notes the command, which autorun's control
// thread takes with Heaprec._next_command.
#pragma once

#include <ruby.h>

namespace heaprec::ruby {

// Defines Heaprec._listen_for_commands(signal_number) and Heaprec._next_command.
void DefineControlSignal(VALUE module);

}  // namespace heaprec::ruby
