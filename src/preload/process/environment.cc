#include "preload/process/environment.h"

#include <string.h>

extern char** environ;

namespace heaprec::preload {

bool IsEnvironmentEntry(const char* entry, const char* name, std::size_t length) {
  return strncmp(entry, name, length) == 0 && entry[length] == '=';
}

namespace {
const char* g_settings_block = nullptr;
}  // namespace

void UseSettingsBlock(const char* block) { g_settings_block = block; }

const char* EnvironmentValue(const char* name) {
  std::size_t length = strlen(name);
  if (g_settings_block != nullptr && strncmp(name, "HEAPREC_", 8) == 0) {
    for (const char* entry = g_settings_block; *entry != '\0'; entry += strlen(entry) + 1) {
      if (IsEnvironmentEntry(entry, name, length)) return entry + length + 1;
    }
    return nullptr;
  }
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (IsEnvironmentEntry(*entry, name, length)) return *entry + length + 1;
  }
  return nullptr;
}

void RemoveFromEnvironment(const char* name) {
  std::size_t length = strlen(name);
  for (char** entry = environ; entry != nullptr && *entry != nullptr;) {
    if (!IsEnvironmentEntry(*entry, name, length)) {
      ++entry;
      continue;
    }
    for (char** move = entry; *move != nullptr; ++move) move[0] = move[1];
  }
}

void ReplaceInEnvironment(const char* name, char* entry) {
  std::size_t length = strlen(name);
  for (char** slot = environ; slot != nullptr && *slot != nullptr; ++slot) {
    if (!IsEnvironmentEntry(*slot, name, length)) continue;
    *slot = entry;
    // Later duplicates would be what some programs read: take them out after this one.
    for (char** rest = slot + 1; *rest != nullptr;) {
      if (!IsEnvironmentEntry(*rest, name, length)) {
        ++rest;
        continue;
      }
      for (char** move = rest; *move != nullptr; ++move) move[0] = move[1];
    }
    return;
  }
}

}  // namespace heaprec::preload
