#include "cli/remote_process.h"

#include <dirent.h>
#include <elf.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace heaprec::cli {
namespace {

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::uint32_t GnuHash(const std::string& name) {
  std::uint32_t h = 5381;
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

std::uint32_t SysvHash(const std::string& name) {
  std::uint32_t h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    std::uint32_t g = h & 0xf0000000u;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

}  // namespace

std::string RemoteProcess::ProcPath(const std::string& file) const {
  return "/proc/" + std::to_string(pid_) + "/" + file;
}

std::vector<Mapping> RemoteProcess::Mappings() const {
  std::vector<Mapping> maps;
  std::ifstream in(ProcPath("maps"));
  std::string line;
  while (std::getline(in, line)) {
    Mapping m;
    std::istringstream fields(line);
    std::string range, device;
    fields >> range >> m.permissions >> std::hex >> m.offset >> device >> std::dec >> m.inode;
    std::getline(fields >> std::ws, m.path);
    std::size_t dash = range.find('-');
    std::size_t colon = device.find(':');
    if (dash == std::string::npos || colon == std::string::npos) continue;
    m.device = makedev(std::stoul(device.substr(0, colon), nullptr, 16),
                       std::stoul(device.substr(colon + 1), nullptr, 16));
    m.start = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    maps.push_back(m);
  }
  return maps;
}

std::vector<ThreadState> RemoteProcess::Threads() const {
  std::vector<ThreadState> threads;
  std::unique_ptr<DIR, int (*)(DIR*)> directory(opendir(ProcPath("task").c_str()), closedir);
  if (!directory) return threads;
  while (dirent* entry = readdir(directory.get())) {
    if (entry->d_name[0] == '.') continue;
    ThreadState t;
    t.tid = static_cast<pid_t>(std::atol(entry->d_name));
    std::string task = ProcPath("task/" + std::string(entry->d_name) + "/");
    t.name = FirstLine(task + "comm");
    std::ifstream status(task + "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("State:", 0) == 0 && line.size() > 7) t.state = line[7];
      if (line.rfind("Seccomp:", 0) == 0) t.seccomp = std::atoi(line.c_str() + 8);
      if (line.rfind("TracerPid:", 0) == 0) t.tracer = std::atoi(line.c_str() + 10);
    }
    std::string syscall = FirstLine(task + "syscall");
    if (syscall.rfind("running", 0) == 0 || syscall.empty()) {
      t.syscall = -2;
    } else {
      // "NUMBER ARG1 ARG2 ...", the arguments in hex.
      char* end = nullptr;
      t.syscall = std::strtol(syscall.c_str(), &end, 10);
      std::strtoull(end, &end, 16);
      t.syscall_second_argument = std::strtoull(end, nullptr, 16);
    }
    threads.push_back(t);
  }
  return threads;
}

std::string RemoteProcess::WaitChannel(pid_t tid) const {
  return FirstLine(ProcPath("task/" + std::to_string(tid) + "/wchan"));
}

char RemoteProcess::ProcessState() const {
  std::string stat = FirstLine(ProcPath("stat"));
  std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return '\0';
  return stat[paren + 2];
}

std::string RemoteProcess::StatusField(const std::string& name) const {
  std::ifstream status(ProcPath("status"));
  std::string line, prefix = name + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::size_t value = line.find_first_not_of(" \t", prefix.size());
    return value == std::string::npos ? "" : line.substr(value);
  }
  return "";
}

uid_t RemoteProcess::Uid() const {
  std::string uid = StatusField("Uid");
  return uid.empty() ? static_cast<uid_t>(-1) : static_cast<uid_t>(std::atol(uid.c_str()));
}

bool RemoteProcess::Read(std::uint64_t address, void* out, std::size_t size) const {
  iovec local = {out, size};
  iovec remote = {reinterpret_cast<void*>(address), size};
  return process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

bool RemoteProcess::Write(std::uint64_t address, const void* data, std::size_t size) const {
  iovec local = {const_cast<void*>(data), size};
  iovec remote = {reinterpret_cast<void*>(address), size};
  return process_vm_writev(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

std::uint64_t RemoteProcess::ObjectBase(const std::vector<Mapping>& maps,
                                        const std::string& suffix) const {
  for (const Mapping& m : maps) {
    if (m.offset == 0 && m.path.size() >= suffix.size() &&
        m.path.compare(m.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return m.start;
    }
  }
  return 0;
}

std::uint64_t RemoteProcess::Symbol(std::uint64_t base, const std::string& name) const {
  Elf64_Ehdr header;
  if (!Read(base, &header, sizeof(header)) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_phnum > 64) {
    return 0;
  }
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  if (!Read(base + header.e_phoff, segments.data(), segments.size() * sizeof(Elf64_Phdr))) return 0;
  // The load bias: a PIE or library's first PT_LOAD has p_vaddr 0; an ET_EXEC's is absolute.
  std::uint64_t bias = header.e_type == ET_DYN ? base : 0;
  std::uint64_t dynamic = 0;
  for (const Elf64_Phdr& s : segments) {
    if (s.p_type == PT_DYNAMIC) dynamic = bias + s.p_vaddr;
  }
  if (dynamic == 0) return 0;
  std::uint64_t symtab = 0, strtab = 0, gnu_hash = 0, sysv_hash = 0;
  for (int i = 0; i < 512; ++i) {
    Elf64_Dyn entry;
    if (!Read(dynamic + i * sizeof(entry), &entry, sizeof(entry)) || entry.d_tag == DT_NULL) break;
    std::uint64_t value = entry.d_un.d_ptr < bias ? entry.d_un.d_ptr + bias : entry.d_un.d_ptr;
    if (entry.d_tag == DT_SYMTAB) symtab = value;
    if (entry.d_tag == DT_STRTAB) strtab = value;
    if (entry.d_tag == DT_GNU_HASH) gnu_hash = value;
    if (entry.d_tag == DT_HASH) sysv_hash = value;
  }
  if (symtab == 0 || strtab == 0) return 0;
  auto matches = [&](std::uint32_t index) -> std::uint64_t {
    Elf64_Sym symbol;
    if (!Read(symtab + index * sizeof(symbol), &symbol, sizeof(symbol))) return 0;
    if (symbol.st_shndx == SHN_UNDEF || symbol.st_value == 0) return 0;
    std::string found(name.size() + 1, '\0');
    if (!Read(strtab + symbol.st_name, found.data(), found.size())) return 0;
    if (found.compare(0, name.size(), name) != 0 || found[name.size()] != '\0') return 0;
    return bias + symbol.st_value;
  };
  if (gnu_hash != 0) {
    std::uint32_t table[4];  // buckets, first symbol, bloom words, bloom shift
    if (!Read(gnu_hash, table, sizeof(table)) || table[0] == 0) return 0;
    std::uint32_t h = GnuHash(name);
    std::uint64_t buckets = gnu_hash + sizeof(table) + std::uint64_t{table[2]} * 8;
    std::uint64_t chains = buckets + std::uint64_t{table[0]} * 4;
    std::uint32_t index;
    if (!Read(buckets + (h % table[0]) * 4, &index, 4) || index < table[1]) return 0;
    for (int steps = 0; steps < 100000; ++steps, ++index) {
      std::uint32_t chain;
      if (!Read(chains + std::uint64_t{index - table[1]} * 4, &chain, 4)) return 0;
      if ((chain | 1) == (h | 1)) {
        if (std::uint64_t address = matches(index)) return address;
      }
      if ((chain & 1) != 0) break;
    }
    return 0;
  }
  if (sysv_hash != 0) {
    std::uint32_t counts[2];  // buckets, chains
    if (!Read(sysv_hash, counts, sizeof(counts)) || counts[0] == 0) return 0;
    std::uint32_t index;
    if (!Read(sysv_hash + 8 + (SysvHash(name) % counts[0]) * 4, &index, 4)) return 0;
    for (int steps = 0; index != 0 && steps < 100000; ++steps) {
      if (std::uint64_t address = matches(index)) return address;
      if (!Read(sysv_hash + 8 + std::uint64_t{counts[0]} * 4 + std::uint64_t{index} * 4, &index,
                4)) {
        return 0;
      }
    }
  }
  return 0;
}

ExecutableFacts ReadExecutableFacts(const std::string& path) {
  ExecutableFacts facts;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(Elf64_Ehdr)) return facts;
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
  if (std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64)
    return facts;
  facts.readable = true;
  auto fits = [&](std::uint64_t offset, std::uint64_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  if (fits(header->e_phoff, std::uint64_t{header->e_phnum} * sizeof(Elf64_Phdr))) {
    const auto* segments = reinterpret_cast<const Elf64_Phdr*>(bytes.data() + header->e_phoff);
    for (int i = 0; i < header->e_phnum; ++i) facts.dynamic |= segments[i].p_type == PT_INTERP;
  }
  if (!fits(header->e_shoff, std::uint64_t{header->e_shnum} * sizeof(Elf64_Shdr))) return facts;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes.data() + header->e_shoff);
  for (int i = 0; i < header->e_shnum; ++i) {
    const Elf64_Shdr& table = sections[i];
    if ((table.sh_type != SHT_SYMTAB && table.sh_type != SHT_DYNSYM) ||
        table.sh_link >= header->e_shnum)
      continue;
    const Elf64_Shdr& strings = sections[table.sh_link];
    if (!fits(table.sh_offset, table.sh_size) || !fits(strings.sh_offset, strings.sh_size))
      continue;
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(bytes.data() + table.sh_offset);
    for (std::uint64_t s = 0; s < table.sh_size / sizeof(Elf64_Sym); ++s) {
      if (symbols[s].st_shndx == SHN_UNDEF || symbols[s].st_name >= strings.sh_size) continue;
      if (ELF64_ST_TYPE(symbols[s].st_info) != STT_FUNC) continue;
      const char* name = bytes.data() + strings.sh_offset + symbols[s].st_name;
      if (std::strncmp(name, "malloc", 7) == 0) facts.defines_malloc = true;
    }
  }
  return facts;
}

}  // namespace heaprec::cli
