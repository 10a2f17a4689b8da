#include "cli/run_environment.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "preload/control/settings.h"
#include "preload/http/address.h"
#include "schema/control.h"
#include "schema/manifest.h"

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

const std::string* RunOptions::Setting(const char* variable) const {
  auto it = settings.find(variable);
  return it == settings.end() ? nullptr : &it->second;
}

namespace {

// The readers of the variables each front end sets: libheaprec.so and its HTTP endpoint, or the
// Ruby gem.
std::uint8_t FrontEndReaders(bool ruby) {
  return ruby ? preload::kReadByRuby : preload::kReadByLibrary | preload::kReadByHttpServer;
}

// Why `row`'s flag does nothing for the chosen front end, with a pointer to the one that does
// where there is a twin.
std::string NotForThisFrontEnd(const preload::SettingRow& row, bool ruby) {
  static constexpr struct {
    const char* flag;
    const char* why;
  } kHints[] = {
      {"--sample-every",
       "--sample-every samples Ruby objects and needs --ruby; native programs are sampled by "
       "bytes with --sample-interval"},
      {"--sample-interval", "--sample-interval samples native memory by bytes"},
      {"--unwind", "--unwind is for native programs; Ruby stacks come from the VM"},
  };
  for (const auto& hint : kHints) {
    if (std::strcmp(hint.flag, row.run_flag) == 0) return hint.why;
  }
  return std::string(row.run_flag) +
         (ruby ? " is for native programs, not with --ruby" : " is for Ruby programs: add --ruby");
}

}  // namespace

std::string CheckRunMode(const RunOptions& o) {
  if (o.Has("HEAPREC_HTTP_PUBLIC") && !o.Has("HEAPREC_HTTP")) {
    return "--http-public goes with --http ADDR";
  }
  if (o.Has(schema::kDormantVariable) && !o.Has("HEAPREC_DUMP_SIGNAL")) {
    return "--dormant needs --dump-signal, which carries `heaprec attach` and `detach` "
           "(e.g. --dormant --dump-signal SIGUSR2)";
  }
  // A setting the chosen front end does not read: accepting it would do nothing.
  for (const preload::SettingRow& row : preload::AllSettings()) {
    if (row.run_flag == nullptr || !o.Has(row.variable)) continue;
    if ((row.readers & FrontEndReaders(o.ruby)) == 0) return NotForThisFrontEnd(row, o.ruby);
  }
  return "";
}

std::string CheckRunSettings(const RunOptions& o) {
  auto invalid = [](const std::string& flag, const std::string& value, const std::string& why) {
    return flag + " '" + value + "' is invalid: " + why;
  };
  for (const preload::SettingRow& row : preload::AllSettings()) {
    const std::string* value = o.Setting(row.variable);
    if (value == nullptr) continue;
    preload::Settings scratch;  // the rows parse into it; only acceptance matters here
    const char* detail = nullptr;
    if (!row.parse(value->c_str(), &scratch, &detail)) {
      return invalid(row.run_flag, *value,
                     detail != nullptr ? detail : std::string("expected ") + row.expected);
    }
  }
  if (const std::string* http = o.Setting("HEAPREC_HTTP")) {
    preload::HttpAddress address;
    const char* ignored = nullptr;
    if (preload::ParseHttpAddress(http->c_str(), &address, &ignored) && !address.is_loopback &&
        !o.Has("HEAPREC_HTTP_PUBLIC")) {
      return "--http '" + *http +
             "' is not a loopback address, and whoever can reach it could read the heap profile; "
             "add --http-public to serve on it anyway";
    }
  }
  if (o.output.empty() || o.output.size() >= PATH_MAX) {
    return invalid("-o", o.output, "expected a non-empty path template shorter than PATH_MAX");
  }
  // The library checks this too, but here heaprec can stop before the program runs for nothing.
  std::filesystem::path directory = std::filesystem::absolute(o.output).parent_path();
  if (directory.string().find('%') == std::string::npos &&
      access(directory.c_str(), W_OK | X_OK) != 0) {
    return invalid(
        "-o", o.output,
        "directory '" + directory.string() + "' is not writable (" + std::strerror(errno) + ")");
  }
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
                                  const std::function<const char*(const char*)>& current,
                                  const std::string& native_library) {
  EnvironmentChanges env;
  if (o.ruby) {
    env.emplace_back("RUBYLIB", Prepend(library, current("RUBYLIB"), ":"));
    env.emplace_back("RUBYOPT", Prepend("-rheaprec/autorun", current("RUBYOPT"), " "));
    if (!native_library.empty()) {
      env.emplace_back("LD_PRELOAD", Prepend(native_library, current("LD_PRELOAD"), ":"));
      env.emplace_back(schema::kRuntimeVariable, "ruby");
    }
  } else {
    env.emplace_back("LD_PRELOAD", Prepend(library, current("LD_PRELOAD"), ":"));
  }
  std::filesystem::path output = o.output;
  if (output.is_relative()) output = std::filesystem::current_path() / output;
  env.emplace_back("HEAPREC_OUTPUT", output.string());
  env.emplace_back(schema::kManifestVariable, manifest);
  for (const preload::SettingRow& row : preload::AllSettings()) {
    const std::string* value = o.Setting(row.variable);
    if (value != nullptr && (row.readers & FrontEndReaders(o.ruby)) != 0) {
      env.emplace_back(row.variable, *value);
    }
  }
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
