// The test programs' executable mappings, printed for the symbolizer tests as
// "map START END OFFSET PATH" lines, from /proc/self/maps.
#pragma once

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>

inline void PrintExecutableMappings() {
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return;
  exe[len] = '\0';
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return;
  char line[PATH_MAX + 256];
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long start, end, offset;
    char perms[5];
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %4s %lx %*s %*s %n", &start, &end, perms, &offset, &path_at) !=
        4) {
      continue;
    }
    char* path = line + path_at;
    path[std::strcspn(path, "\n")] = '\0';
    if (perms[2] == 'x' && std::strcmp(path, exe) == 0) {
      std::printf("map %lx %lx %lx %s\n", start, end, offset, path);
    }
  }
  std::fclose(maps);
}
