#include "heavy_part.h"

#include <dlfcn.h>

#include <string>

#include <sys/stat.h>

namespace kd::probe {
namespace {

struct Loaded {
  const kd_probe_table* table = nullptr;
  int kind = KD_ERR_LIBRARY;  // why not: KD_ERR_INCOMPLETE (not built, another build's) or the loader's refusal
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
    l.kind = KD_ERR_INCOMPLETE;
    l.why = "the probe's heavy part (" KD_PROBE_HEAVY_LIBRARY ": layers L4 to L8) is not built beside libkd_probe.so";
    return l;
  }
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {  // the loader's own words: a library of LibTorch's that is missing or does not load
    const char* err = ::dlerror();
    l.why = err ? err : "dlopen(" KD_PROBE_HEAVY_LIBRARY ") failed";
    return l;
  }
  auto entry = reinterpret_cast<kd_probe_entry_fn>(::dlsym(handle, KD_PROBE_HEAVY_ENTRY));
  const kd_probe_table* t = entry ? entry() : nullptr;
  if (!t || t->abi_version != KD_PROBE_ABI_VERSION) {
    l.kind = KD_ERR_INCOMPLETE;
    l.why = t ? KD_PROBE_HEAVY_LIBRARY " is from another build of the suite than libkd_probe.so (its interface " +
                    std::to_string(t->abi_version) + ", libkd_probe.so's " + std::to_string(KD_PROBE_ABI_VERSION) + ")"
              : KD_PROBE_HEAVY_LIBRARY " beside libkd_probe.so is not the probe's heavy part (no " KD_PROBE_HEAVY_ENTRY ")";
    return l;
  }
  l.table = t;
  return l;
}

}  // namespace

const kd_probe_table* heavy_table(kd_status* why) {
  static const Loaded loaded = load();
  if (!loaded.table && why) *why = make_status(loaded.kind, loaded.why);
  return loaded.table;
}

kd_status heavy_part() {
  kd_status why = ok_status();
  heavy_table(&why);
  return why;
}

}  // namespace kd::probe
