#include "loaded_libcuda.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <climits>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "contract/report_parts.h"

namespace kd::machine {

std::string libcuda_source(const std::string& real_path, const std::string& ld_library_path) {
  const std::string folder = real_path.substr(0, real_path.rfind('/'));
  std::istringstream parts(folder);
  for (std::string part; std::getline(parts, part, '/');)
    if (part == "compat") return "compat";
  std::istringstream dirs(ld_library_path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    char real[PATH_MAX];
    if (!dir.empty() && ::realpath(dir.c_str(), real) && folder == real) return "library_path";
  }
  return "system";
}

std::string libcuda_file_version(const std::string& real_path) {
  const std::string name = real_path.substr(real_path.rfind('/') + 1);
  const std::string prefix = "libcuda.so.";
  if (name.rfind(prefix, 0) != 0) return "";
  const std::string v = name.substr(prefix.size());
  return v.find('.') != std::string::npos && v.find_first_not_of("0123456789.") == std::string::npos ? v : "";
}

nlohmann::json loaded_libcuda() {
  nlohmann::json out;
  report::put(&out, report::libcuda_loaded, false);
  report::put(&out, report::libcuda_source, std::nullopt);
  report::put(&out, report::libcuda_version, std::nullopt);
  report::put(&out, report::libcuda_cuda_version, std::nullopt);
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);  // only if the runtime loaded it
  if (!lib) return out;
  report::put(&out, report::libcuda_loaded, true);
  void* init = ::dlsym(lib, "cuInit");
  Dl_info info{};
  char real[PATH_MAX];
  if (init && ::dladdr(init, &info) && info.dli_fname && ::realpath(info.dli_fname, real)) {
    const char* ld = std::getenv("LD_LIBRARY_PATH");
    report::put(&out, report::libcuda_source, libcuda_source(real, ld ? ld : ""));
    report::put(&out, report::libcuda_version, report::unless_empty(libcuda_file_version(real)));
  }
  // cuDriverGetVersion needs no cuInit: the CUDA version this libcuda supports (13000 -> "13.0").
  if (auto get = reinterpret_cast<int (*)(int*)>(::dlsym(lib, "cuDriverGetVersion"))) {
    int v = 0;
    if (get(&v) == 0 && v > 0) report::put(&out, report::libcuda_cuda_version, fmt::format("{}.{}", v / 1000, v % 1000 / 10));
  }
  ::dlclose(lib);  // the reference NOLOAD took
  return out;
}

}  // namespace kd::machine
