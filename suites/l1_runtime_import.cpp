// L1 runtime & import: which runtime runs, and LibTorch actually loads.
#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <fstream>

#include <fmt/format.h>

#include "fixtures/layer_test.h"
#include "fixtures/probe_loader.h"

#ifndef KD_VERSION
#define KD_VERSION "unknown"
#endif

namespace kd {
namespace {

std::string os_name() {  // PRETTY_NAME from os-release: a distribution name, nothing about the machine
  std::ifstream f("/etc/os-release");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  return "";
}

std::string compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

}  // namespace

KD_LAYER(1, L1_RuntimeImport, "runtime & import", true);

KD_STEP(1, L1_RuntimeImport, RuntimeFacts, "L1.runtime") {
  utsname u{};
  if (::uname(&u) != 0) return Outcome::fail(Code::RuntimeError, "uname() failed: the runtime cannot be identified");
  ctx.fact("/runtime/os_family", u.sysname[0] == 'L' ? "linux" : u.sysname);
  const std::string os = os_name();
  ctx.fact("/runtime/os_name", os.empty() ? nlohmann::json() : nlohmann::json(os));
  ctx.fact("/runtime/arch", u.machine);
  ctx.fact("/runtime/libc", fmt::format("glibc {}", gnu_get_libc_version()));
  ctx.fact("/runtime/compiler", compiler());
  ctx.fact("/runtime/suite_version", KD_VERSION);
  return Outcome::pass();
}

KD_STEP(1, L1_RuntimeImport, LibTorchLoads, "L1.import") {
  const ProbeLoad load = load_probe(default_probe_path());
  if (!load.probe) {
    ctx.fact("/pytorch/loaded", false);
    return Outcome::fail(load.code, load.message);
  }
  kd_torch_info info{};
  const kd_status s = load.probe->torch_info(&info);
  if (s.kind != KD_OK)
    return Outcome::fail(Code::TorchImportFailed, fmt::format("LibTorch loaded but did not answer: {}", s.message));
  ctx.probe = load.probe;
  auto or_null = [](const char* v) { return *v ? nlohmann::json(v) : nlohmann::json(); };
  ctx.fact("/pytorch/loaded", true);
  ctx.fact("/pytorch/version", or_null(info.version));
  ctx.fact("/pytorch/cuda_compiled", or_null(info.cuda_compiled));
  ctx.fact("/pytorch/hip_compiled", or_null(info.hip_compiled));
  ctx.fact("/pytorch/backend", info.backend);
  ctx.fact("/pytorch/source", info.source);
  return Outcome::pass();
}

}  // namespace kd
