// The process's environment, as heaprec reads and changes it: through `environ` itself, never
// getenv, setenv or unsetenv. A program may define its own (bash does, over its variable table,
// which is not set up yet while the library starts), and its unsetenv would leave the entry for
// every child; setenv would also call malloc from inside heaprec.
//
// No allocation, no locks. Not thread-safe against the program changing its environment at the
// same moment, like getenv itself: heaprec changes it only at start-up, before the program's main.
#pragma once

#include <cstddef>

namespace heaprec::preload {

// Whether `entry` ("NAME=VALUE") is the variable `name` of `length` characters.
bool IsEnvironmentEntry(const char* entry, const char* name, std::size_t length);

// The value of the first NAME=... in the environment, or null. For heaprec's own variables
// (HEAPREC_*), the settings block instead when one was given (UseSettingsBlock).
const char* EnvironmentValue(const char* name);

// A library injected by `heaprec attach` never had heaprec's variables in its environment: its
// settings arrive as a block of "NAME=value" strings ending in an empty one (schema/attach.h),
// which must stay valid for the life of the process. Read from then on instead of the environment.
void UseSettingsBlock(const char* block);

// Takes every NAME=... out of the environment in place, as glibc's unsetenv does.
void RemoveFromEnvironment(const char* name);

// Puts `entry` ("NAME=VALUE") in place of NAME's first entry and takes out any other. `entry` must
// stay valid for the life of the process (static storage). Does nothing when NAME is not set.
void ReplaceInEnvironment(const char* name, char* entry);

}  // namespace heaprec::preload
