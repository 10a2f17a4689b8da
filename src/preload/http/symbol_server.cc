#include "preload/http/symbol_server.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/own_descriptors.h"
#include "preload/http/elf_symbols.h"
#include "preload/http/symbol_query.h"
#include "preload/objects/loaded_objects.h"

namespace heaprec::preload {
namespace {

// Addresses answered per batch: 1024 x (address, vaddr, match) = 48 KiB of the server thread's
// 256 KiB stack. pprof posts one request per mapping, so a batch is normally one object's.
constexpr std::size_t kBatch = 1024;
constexpr std::size_t kMaxName = 1024;  // longer names are cut (a C++ template's can be longer)

struct Batch {
  std::uint64_t addresses[kBatch];
  std::uint64_t vaddrs[kBatch];
  SymbolMatch matches[kBatch];
  std::size_t count = 0;
};

bool WriteLine(ByteSink& out, std::uint64_t address, const char* name) {
  static const char kDigits[] = "0123456789abcdef";
  char hex[19] = "0x";
  int digits = 1;
  while (digits < 16 && (address >> (4 * digits)) != 0) ++digits;
  for (int i = 0; i < digits; ++i) hex[2 + i] = kDigits[(address >> (4 * (digits - 1 - i))) & 15];
  hex[2 + digits] = ' ';
  return out.Write(hex, 3 + static_cast<std::size_t>(digits)) && out.Write(name, strlen(name)) &&
         out.Write("\n", 1);
}

// The names of batch.addresses[first, last), all within `object`.
bool AnswerObject(const LoadedObject& object, Batch& batch, std::size_t first, std::size_t last,
                  ByteSink& out) {
  int fd = OpenOwn(object.path, O_RDONLY, 0);
  if (fd < 0) return true;  // nothing to name them with: no lines
  ElfSymbolFile file;
  bool ok = true;
  if (file.Open(fd)) {
    // Without a build id in memory there is nothing to compare: the file at the path is taken.
    if (file.HasBuildId(object.build_id)) {
      const std::size_t count = last - first;
      for (std::size_t k = 0; k < count; ++k) {
        batch.vaddrs[k] = batch.addresses[first + k] - object.base;
      }
      file.Match(batch.vaddrs, count, batch.matches);
      char name[kMaxName];
      for (std::size_t k = 0; k < count && ok; ++k) {
        if (file.Name(batch.matches[k], name, sizeof(name))) {
          ok = WriteLine(out, batch.addresses[first + k], name);
        }
      }
    }
  }
  close(fd);
  return ok;
}

bool AnswerBatch(Batch& batch, ByteSink& out) {
  std::uint64_t* begin = batch.addresses;
  std::sort(begin, begin + batch.count);
  const std::size_t count =
      static_cast<std::size_t>(std::unique(begin, begin + batch.count) - begin);
  batch.count = 0;
  LoadedObject object;
  for (std::size_t i = 0; i < count;) {
    if (!DescribeObjectAt(batch.addresses[i], &object)) {
      ++i;  // in no loaded object: unloaded since, JIT code, or not an address at all
      continue;
    }
    std::size_t end = i + 1;
    while (end < count && batch.addresses[end] >= object.map_start &&
           batch.addresses[end] < object.map_end) {
      ++end;
    }
    if (!AnswerObject(object, batch, i, end, out)) return false;
    i = end;
  }
  return true;
}

}  // namespace

bool WriteSymbolAnswers(ByteSource& query, ByteSink& out) {
  // Go answers "num_symbols: 1" whatever it knows: pprof only asks whether it is more than 0.
  if (!out.Write("num_symbols: 1\n", 15)) return false;
  Batch batch;
  SymbolQueryParser parser;
  char chunk[4096];
  for (;;) {
    long n = query.Read(chunk, sizeof(chunk));
    if (n < 0) return false;
    if (n == 0) break;
    for (std::size_t used = 0; used < static_cast<std::size_t>(n);) {
      used += parser.Feed(chunk + used, static_cast<std::size_t>(n) - used, batch.addresses, kBatch,
                          &batch.count);
      if (batch.count == kBatch && !AnswerBatch(batch, out)) return false;
    }
  }
  std::uint64_t last;
  if (parser.Finish(&last)) batch.addresses[batch.count++] = last;  // room: batches end < kBatch
  return AnswerBatch(batch, out);
}

}  // namespace heaprec::preload
