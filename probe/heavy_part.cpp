#include "heavy_part.h"

#include <dlfcn.h>

#include <string>
#include <sys/stat.h>

namespace kd::probe {
namespace {

struct Loaded {
  const kd_probe_table* table = nullptr;
  std::string why;
};

// Beside this library: the build puts both in one folder, and so does cmake --install.
std::string beside_this_library() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&heavy_table), &info) || !info.dli_fname) return KD_PROBE_HEAVY_LIBRARY;
  const std::string self = info.dli_fname;
  return self.substr(0, self.rfind('/') + 1) + KD_PROBE_HEAVY_LIBRARY;
}

Loaded load() {
  Loaded l;
  const std::string path = beside_this_library();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    l.why = "the probe's heavy part (" KD_PROBE_HEAVY_LIBRARY ": layers L4 to L8) is not built "
            "beside libkd_probe.so: build it with scripts/build (scripts/run does when a run needs it)";
    return l;
  }
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    l.why = err ? err : "dlopen(" KD_PROBE_HEAVY_LIBRARY ") failed";
    return l;
  }
  auto entry = reinterpret_cast<kd_probe_entry_fn>(::dlsym(handle, KD_PROBE_HEAVY_ENTRY));
  const kd_probe_table* t = entry ? entry() : nullptr;
  if (!t || t->abi_version != KD_PROBE_ABI_VERSION) {
    l.why = KD_PROBE_HEAVY_LIBRARY " is from another build than libkd_probe.so: rebuild both (scripts/build)";
    return l;
  }
  l.table = t;
  return l;
}

}  // namespace

const kd_probe_table* heavy_table(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.table && why) *why = loaded.why;
  return loaded.table;
}

kd_status heavy_part() {
  std::string why;
  return heavy_table(&why) ? ok_status() : make_status(KD_ERR_LIBRARY, why);
}

}  // namespace kd::probe
