#include "cli/run_environment.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace heaprec::cli {
namespace {

// `first`, then the variable's current value if it has one, joined by `separator`.
std::string Prepend(const std::string& first, const char* current, const char* separator) {
  if (current == nullptr || *current == '\0') return first;
  return first + separator + current;
}

// Whether execvp would run `path`: a regular file this process may execute.
bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Reads exactly `size` bytes at `offset`, or fails.
bool ReadAt(int fd, void* buffer, size_t size, off_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<char*>(buffer) + done, size - done,
                      offset + static_cast<off_t>(done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// IsStaticExecutable for one ELF class: `Ehdr` and `Phdr` are Elf32_* or Elf64_*.
template <typename Ehdr, typename Phdr>
bool HasNoInterpreter(int fd) {
  Ehdr header;
  if (!ReadAt(fd, &header, sizeof(header), 0)) return false;
  if (header.e_type != ET_EXEC && header.e_type != ET_DYN) return false;
  // PN_XNUM (more headers than e_phnum can count) never happens for an executable; not worth
  // following to section 0.
  if (header.e_phentsize != sizeof(Phdr) || header.e_phnum == 0 || header.e_phnum == PN_XNUM) {
    return false;
  }
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Phdr program_header;
    off_t offset = static_cast<off_t>(header.e_phoff + i * sizeof(Phdr));
    if (!ReadAt(fd, &program_header, sizeof(program_header), offset)) return false;
    if (program_header.p_type == PT_INTERP) return false;
  }
  return true;
}

// Whether the ELF identification bytes name a file this machine's byte order reads as is; another
// byte order cannot run here anyway.
bool IsNativeElf(const unsigned char (&ident)[EI_NIDENT]) {
  constexpr unsigned char kNativeData =
      __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  return ident[EI_MAG0] == ELFMAG0 && ident[EI_MAG1] == ELFMAG1 && ident[EI_MAG2] == ELFMAG2 &&
         ident[EI_MAG3] == ELFMAG3 && ident[EI_DATA] == kNativeData;
}

}  // namespace

std::string CheckRunMode(const RunOptions& o) {
  if (o.http_public && o.http.empty()) return "--http-public goes with --http ADDR";
  if (!o.ruby) {
    if (o.dormant && o.dump_signal.empty()) {
      return "--dormant needs --dump-signal, which carries `heaprec attach` and `detach` "
             "(e.g. --dormant --dump-signal SIGUSR2)";
    }
    if (!o.sample_every.empty()) {
      return "--sample-every samples Ruby objects and needs --ruby; native programs are sampled "
             "by bytes with --sample-interval";
    }
    return "";
  }
  if (!o.sample_interval.empty()) {
    return "--sample-interval is for native programs; with --ruby, objects are sampled with "
           "--sample-every N (1 = every object)";
  }
  // Read only by libheaprec.so, which --ruby does not load: accepting them would do nothing.
  if (!o.unwind.empty()) return "--unwind is for native programs; Ruby stacks come from the VM";
  if (!o.dump_signal.empty()) return "--dump-signal is for native programs, not with --ruby";
  if (!o.dump_above.empty()) return "--dump-above is for native programs, not with --ruby";
  if (o.quiet) return "--quiet is for native programs, not with --ruby";
  if (o.no_follow) return "--no-follow is for native programs, not with --ruby";
  if (o.dormant) return "--dormant is for native programs, not with --ruby";
  if (!o.http.empty()) return "--http is for native programs, not with --ruby";
  return "";
}

std::string RubyLibraryDirectory(const std::string& executable, const char* override_directory) {
  std::filesystem::path directory;
  if (override_directory != nullptr && *override_directory != '\0') {
    directory = override_directory;
  } else {
    directory = std::filesystem::path(executable).parent_path() / ".." / "lib" / "ruby";
  }
  return std::filesystem::absolute(directory).lexically_normal().string();
}

bool HasRubyAutorun(const std::string& directory) {
  std::error_code ec;
  return std::filesystem::is_regular_file(
      std::filesystem::path(directory) / "heaprec" / "autorun.rb", ec);
}

EnvironmentChanges RunEnvironment(const RunOptions& o, const std::string& library,
                                  const std::string& manifest,
                                  const std::function<const char*(const char*)>& current) {
  EnvironmentChanges env;
  if (o.ruby) {
    env.emplace_back("RUBYLIB", Prepend(library, current("RUBYLIB"), ":"));
    env.emplace_back("RUBYOPT", Prepend("-rheaprec/autorun", current("RUBYOPT"), " "));
  } else {
    env.emplace_back("LD_PRELOAD", Prepend(library, current("LD_PRELOAD"), ":"));
  }
  std::filesystem::path output = o.output;
  if (output.is_relative()) output = std::filesystem::current_path() / output;
  env.emplace_back("HEAPREC_OUTPUT", output.string());
  env.emplace_back("HEAPREC_MANIFEST", manifest);
  auto set_if = [&env](const char* name, const std::string& value) {
    if (!value.empty()) env.emplace_back(name, value);
  };
  if (o.ruby) {
    set_if("HEAPREC_SAMPLE_EVERY", o.sample_every);
  } else {
    set_if("HEAPREC_SAMPLE_INTERVAL", o.sample_interval);
  }
  set_if("HEAPREC_DUMP_INTERVAL", o.dump_interval);
  if (!o.ruby) {
    set_if("HEAPREC_DUMP_SIGNAL", o.dump_signal);
    set_if("HEAPREC_DUMP_ABOVE", o.dump_above);
    if (o.quiet) env.emplace_back("HEAPREC_QUIET", "1");
    set_if("HEAPREC_UNWIND", o.unwind);
    if (o.dormant) env.emplace_back("HEAPREC_DORMANT", "1");
    set_if("HEAPREC_HTTP", o.http);
    if (o.http_public) env.emplace_back("HEAPREC_HTTP_PUBLIC", "1");
  }
  set_if("HEAPREC_MAX_DEPTH", o.max_depth);
  set_if("HEAPREC_SEED", o.seed);
  return env;
}

std::string FindProgram(const std::string& name, const char* search_path) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return name;
  std::string default_path = "/bin:/usr/bin";  // glibc's, should confstr not know
  if (search_path == nullptr) {
    if (size_t size = confstr(_CS_PATH, nullptr, 0); size > 1) {
      default_path.resize(size);
      confstr(_CS_PATH, default_path.data(), size);
      default_path.resize(size - 1);  // confstr counts the terminating NUL
    }
    search_path = default_path.c_str();
  }
  std::string directories = search_path;
  size_t start = 0;
  for (;;) {
    size_t end = directories.find(':', start);
    std::string directory = directories.substr(start, end - start);
    std::string candidate = (directory.empty() ? "." : directory) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    if (end == std::string::npos) return "";
    start = end + 1;
  }
}

bool IsStaticExecutable(const std::string& file) {
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char ident[EI_NIDENT];
  bool result = false;
  if (ReadAt(fd, ident, sizeof(ident), 0) && IsNativeElf(ident)) {
    if (ident[EI_CLASS] == ELFCLASS64) result = HasNoInterpreter<Elf64_Ehdr, Elf64_Phdr>(fd);
    if (ident[EI_CLASS] == ELFCLASS32) result = HasNoInterpreter<Elf32_Ehdr, Elf32_Phdr>(fd);
  }
  close(fd);
  return result;
}

}  // namespace heaprec::cli
