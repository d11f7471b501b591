#include "heavy_part.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <optional>

#include <fmt/format.h>

namespace kd::heavy {

void register_index();  // runner/heavy_index.cpp: the part's layers and steps, standing in for it

namespace {

std::optional<Part> g_part;
std::string g_absent = "the diagnostic's heavy part was not looked for";

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string library_path() {  // libkd_diagnostic_heavy.so beside this executable
  const std::string exe = self_path();
  return exe.substr(0, exe.rfind('/') + 1) + "libkd_diagnostic_heavy.so";
}

// A section of a 64-bit ELF file, found through its section headers: a note's descriptor in hex (.note.gnu.build-id,
// the linker's build ID), or another section's text up to its first NUL (.kd_built_for, the part's stamp); "" if none.
std::string section_text(const std::string& elf_path, const std::string& section) {
  std::ifstream f(elf_path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::string(reinterpret_cast<char*>(eh.e_ident), 4) != ELFMAG ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
    return "";
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  f.seekg(static_cast<std::streamoff>(eh.e_shoff));
  if (!f.read(reinterpret_cast<char*>(sh.data()), static_cast<std::streamsize>(sh.size() * sizeof(Elf64_Shdr)))) return "";
  const auto bytes = [&f](const Elf64_Shdr& s) {
    std::string b(s.sh_size < (1u << 20) ? s.sh_size : 0, '\0');
    f.seekg(static_cast<std::streamoff>(s.sh_offset));
    if (!f.read(b.data(), static_cast<std::streamsize>(b.size()))) b.clear();
    return b;
  };
  const std::string names = bytes(sh[eh.e_shstrndx]);
  for (const Elf64_Shdr& s : sh) {
    if (s.sh_name >= names.size() || names.c_str() + s.sh_name != section) continue;
    std::string b = bytes(s);
    // A note (.note.gnu.build-id): the ID is its descriptor, after the 12-byte header and the name "GNU\0".
    if (s.sh_type == SHT_NOTE) b = b.size() > 16 ? b.substr(16) : "";
    std::string hex;
    for (unsigned char c : b) {
      if (s.sh_type != SHT_NOTE && (c == '\0' || c == '\n')) break;  // the part's stamp: text
      hex += s.sh_type == SHT_NOTE ? fmt::format("{:02x}", c) : std::string(1, static_cast<char>(c));
    }
    return hex;
  }
  return "";
}

std::string build_advice() {
  return "build it (scripts/build, or cmake --build on the build folder); scripts/run builds what a run selects";
}

}  // namespace

bool provide(const Part& part) {
  g_part = part;
  return true;
}

const Part* part() { return g_part ? &*g_part : nullptr; }
const std::string& absent_reason() { return g_absent; }

void load() {
  static bool done = false;
  if (done) return;
  done = true;
  const std::string path = library_path();
  if (::access(path.c_str(), F_OK) != 0) {
    g_absent = fmt::format("the diagnostic's heavy part ({}: L4 to L8, aggregate) is not built: {}", path, build_advice());
  } else if (const std::string mine = section_text(self_path(), ".note.gnu.build-id"),
             its = section_text(path, ".kd_built_for");
             its != mine) {
    // Its code was compiled against this diagnostic's headers at another time: loading it could run anything.
    g_absent = fmt::format("the diagnostic's heavy part ({}) was built for another build of the diagnostic "
                           "(build ID {}, this one {}): {}", path, its.empty() ? "none" : its, mine.empty() ? "none" : mine,
                           build_advice());
  } else if (::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
    const char* e = ::dlerror();
    g_absent = fmt::format("the diagnostic's heavy part cannot be loaded: {}", e ? e : "unknown error");
  } else {
    // What it registered stands; a library of that name that gave nothing is not this diagnostic's part.
    g_absent = g_part ? "" : fmt::format("{} loaded but is not the diagnostic's heavy part: {}", path, build_advice());
    return;
  }
  register_index();
}

}  // namespace kd::heavy
